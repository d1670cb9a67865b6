// A broadcast tried before it is sent (docs/broadcasts.md "Trying a broadcast"): its content
// rendered for one contact (the preview), and the POST /v1/emails body of a test email of it.
// Both render exactly as the fan-out does (fan-out-batch.ts), so that what is checked is what
// the contacts get.

import { notFound } from '../../../lib/errors.js';
import type { Store } from '../../../store/store.js';
import { findContact, listProperties } from '../contacts/contacts.repo.js';
import type { SendEmailBody } from '../../sending/emails/emails.schema.js';
import type { RenderedContent } from '../../sending/templates/render-version.js';
import type { RenderTemplate } from './fan-out.js';
import type { Broadcast } from './broadcast.js';
import {
  broadcastVariables,
  compileInline,
  renderInline,
  sendBodyFor,
  type FanOutContact,
} from './broadcast-content.js';
import { findBroadcast } from './broadcasts.repo.js';
import type { PreviewBroadcastBody, TestBroadcastBody } from './broadcasts.schema.js';

/** The tag a test email of a broadcast carries (its value: the broadcast's id); it has no broadcast_id, so no count of the broadcast includes it. */
export const TEST_TAG = 'broadcast_test';

export interface TrialDeps {
  store: Store;
  /** a template_id broadcast's content for one recipient, as the fan-out renders it (templates.service.ts renderForSend) */
  renderTemplate: RenderTemplate;
  /** the contact's preference page (empty without http.public_url), as in the emails the fan-out makes */
  preferencesUrl(contactId: string): Promise<string>;
}

async function broadcastOf(deps: TrialDeps, projectId: string, id: string): Promise<Broadcast> {
  const b = await findBroadcast(deps.store.reader, projectId, id);
  if (!b) throw notFound(`broadcast ${id}`);
  return b;
}

async function contactOf(deps: TrialDeps, projectId: string, id: string): Promise<FanOutContact> {
  const c = await findContact(deps.store.reader, projectId, id);
  if (!c) throw notFound(`contact ${id}`);
  return c;
}

/** The content for `contact` (null: one with only the address `to`, no names, every property at its fallback, no preference link). */
async function renderFor(
  deps: TrialDeps,
  b: Broadcast,
  contact: FanOutContact | null,
  to: string,
): Promise<RenderedContent & { version: number | null }> {
  const who = contact ?? { id: '', email: to, firstName: null, lastName: null, properties: {} };
  const link = contact ? await deps.preferencesUrl(contact.id) : '';
  const variables = broadcastVariables(who, await listProperties(deps.store.reader, b.projectId), link);
  const inline = compileInline(b.content);
  if (inline) return { ...renderInline(inline, variables), version: null };
  const made = await deps.renderTemplate(
    b.projectId,
    b.content.template_id!,
    b.content.template_version ?? null,
    variables,
    to,
  );
  return { ...made.rendered, version: made.version };
}

export function broadcastTrials(deps: TrialDeps) {
  return {
    /** POST /v1/broadcasts/{id}/preview: what `contact_id` would get (whatever the broadcast's status). */
    async preview(projectId: string, id: string, body: PreviewBroadcastBody) {
      const b = await broadcastOf(deps, projectId, id);
      const contact = await contactOf(deps, projectId, body.contact_id);
      return { contact, rendered: await renderFor(deps, b, contact, contact.email) };
    },
    /** POST /v1/broadcasts/{id}/test: the body of a test email, sent by the caller through POST /v1/emails's path. */
    async testEmail(projectId: string, id: string, body: TestBroadcastBody): Promise<SendEmailBody> {
      const b = await broadcastOf(deps, projectId, id);
      const contact = body.contact_id ? await contactOf(deps, projectId, body.contact_id) : null;
      const rendered = await renderFor(deps, b, contact, body.to);
      return sendBodyFor({ ...b.content, tags: { ...b.content.tags, [TEST_TAG]: b.id } }, body.to, rendered);
    },
  };
}
