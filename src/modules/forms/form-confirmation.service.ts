import type { Knex } from 'knex';
import { newId } from '../../lib/ids.js';
import { lockRows } from '../../store/db.js';
import { addMembers } from '../audiences/audiences.repo.js';
import { checkValue } from '../contacts/contact-properties.js';
import { contactById, listProperties, updateContact, type Contact } from '../contacts/contacts.repo.js';
import { contactEvent, presented } from '../contacts/contacts.service.js';
import { prepareEmail } from '../emails/prepare.js';
import { insertEvents } from '../events/events.repo.js';
import { preferencesUrl, signPreferenceToken } from '../preferences/token.js';
import { findProject } from '../projects/projects.repo.js';
import { confirmationBody } from './confirmation-mail.js';
import { CONFIRM_WINDOW_MS, confirmUrl, signConfirmToken, verifyConfirmToken } from './confirm-token.js';
import type { FormDeps } from './form-deps.js';
import * as repo from './forms.repo.js';
import type { Form, Submission } from './forms.repo.js';

// A submission's confirmation (double opt-in; docs/forms.md): the mail with its signed link, and
// what confirming does: the submitted values applied to the contact, pending cleared, the contact
// in the form's audience, contact.created (a contact never announced) or contact.updated, in one
// transaction.

/**
 * The submitted values on the contact, pending cleared, the contact in the
 * audience, the submission confirmed, and the event. `resubscribe`: a
 * confirmed address asked again, which ends its unsubscription (a
 * submission without double opt-in proves nothing of the kind).
 */
export async function applySubmission(deps: FormDeps, trx: Knex.Transaction, audienceId: string, sub: Submission, resubscribe: boolean): Promise<void> {
  const c = await contactById(trx, sub.contactId);
  if (!c) return;
  const now = deps.clock.now();
  const declared = new Map((await listProperties(trx, c.projectId)).map((p) => [p.key, p]));
  const properties = { ...c.properties };
  // a property deleted or retyped since the submission is left as it is
  for (const [k, v] of Object.entries(sub.submitted.properties)) if (declared.has(k) && checkValue(declared.get(k)!.type, v).ok) properties[k] = v;
  const updated: Contact = {
    ...c,
    firstName: sub.submitted.first_name ?? c.firstName,
    lastName: sub.submitted.last_name ?? c.lastName,
    properties,
    pending: false,
    unsubscribed: resubscribe ? false : c.unsubscribed,
    updatedAt: now,
  };
  await updateContact(trx, updated);
  await addMembers(trx, audienceId, [c.id], now);
  await repo.markConfirmed(trx, sub.id, now);
  const [shown] = await presented(trx, c.projectId, [updated]);
  // a pending contact was never announced: its confirmation is its creation
  await insertEvents(trx, [contactEvent(c.pending ? 'contact.created' : 'contact.updated', shown!, c.projectId, now)]);
}

/**
 * The confirmation mail, through the accept like POST /v1/emails, in the
 * form's environment. Its refusal (a suppressed address, a domain no longer
 * verified) is logged, never told: the answer to a submission is the same
 * for every address.
 */
export async function sendConfirmation(deps: FormDeps, form: Form, sub: Submission): Promise<void> {
  const project = await findProject(deps.store.reader, form.projectId);
  if (!project || project.suspended) return;
  if (form.environment === 'live' && !project.approved) {
    deps.logger.warn({ form_id: form.id, project_id: project.id }, 'form confirmation not sent: the project is not approved for live mail');
    return;
  }
  const url = confirmUrl(deps.publicUrl!, form.id, signConfirmToken(await deps.key(), sub.id));
  const prepared = prepareEmail(confirmationBody(form, sub.email, url, sub.submitted), deps.clock.now());
  if (prepared.template) {
    const t = prepared.template;
    const { version, rendered } = await deps.templates.renderForSend(project.id, { templateId: t.id, version: null, variables: t.variables, language: null, firstRecipient: sub.email });
    Object.assign(prepared, { subject: rendered.subject, html: rendered.html, text: rendered.text, templateId: t.id, templateVersion: version });
  }
  await deps.accept.submit({ project, environment: form.environment, prepared, attachments: [], requestId: newId('request'), idempotency: null });
}

/** The submission a link names, if it is of this form and still works (confirmed ones always do, until pruned). */
async function submissionOf(deps: FormDeps, formId: string, token: string): Promise<Submission | null> {
  const id = verifyConfirmToken(await deps.key(), token);
  const sub = id ? await repo.submissionById(deps.store.reader, id) : null;
  if (!sub || sub.formId !== formId) return null;
  if (sub.confirmedAt === null && sub.createdAt + CONFIRM_WINDOW_MS < deps.clock.now()) return null;
  return sub;
}

export interface Confirmation {
  formName: string;
  email: string;
  confirmed: boolean;
  /** the contact's preference page */
  preferencesUrl: string | null;
}

async function confirmationOf(deps: FormDeps, form: Form, sub: Submission, confirmed: boolean): Promise<Confirmation> {
  const prefs = deps.publicUrl ? preferencesUrl(deps.publicUrl, signPreferenceToken(await deps.key(), sub.contactId)) : null;
  return { formName: form.name, email: sub.email, confirmed, preferencesUrl: prefs };
}

/** GET of a link: what it would confirm; changes nothing (link scanners follow links). Null: not valid. */
export async function describeConfirmation(deps: FormDeps, formId: string, token: string): Promise<Confirmation | null> {
  const sub = await submissionOf(deps, formId, token);
  const form = sub ? await repo.formById(deps.store.reader, formId) : null;
  return sub && form ? confirmationOf(deps, form, sub, sub.confirmedAt !== null) : null;
}

/** POST of a link: the submission applied once; again, nothing more happens. Null: not valid. */
export async function confirmSubmission(deps: FormDeps, formId: string, token: string): Promise<Confirmation | null> {
  const sub = await submissionOf(deps, formId, token);
  const form = sub ? await repo.formById(deps.store.reader, formId) : null;
  if (!sub || !form) return null;
  await deps.store.tx(async (trx) => {
    await lockRows(trx, 'projects', [form.projectId]);
    // read again under the lock: two presses of the button apply it once
    const fresh = await repo.submissionById(trx, sub.id);
    if (fresh && fresh.confirmedAt === null) await applySubmission(deps, trx, form.audienceId, fresh, true);
  });
  return confirmationOf(deps, form, sub, true);
}
