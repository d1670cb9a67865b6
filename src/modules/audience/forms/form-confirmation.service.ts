import type { Knex } from 'knex';
import { newId } from '../../../lib/ids.js';
import { lockRows } from '../../../store/db.js';
import { addMembers } from '../audiences/audiences.repo.js';
import { contactById, listProperties, updateContact, type Contact } from '../contacts/contacts.repo.js';
import { contactEvent, presented } from '../contacts/contacts.service.js';
import { prepareEmail } from '../../sending/emails/prepare.js';
import { insertEvents } from '../../notifying/events/events.repo.js';
import { preferencesUrl, signPreferenceToken } from '../preferences/preference-token.js';
import { findProject } from '../../account/projects/projects.repo.js';
import { confirmationBody } from './confirmation-mail.js';
import { CONFIRM_WINDOW_MS, confirmUrl, signConfirmToken, verifyConfirmToken } from './confirm-token.js';
import type { FormDeps } from './form-deps.js';
import { submittedList, submittedValues } from './form-rules.js';
import * as repo from './forms.repo.js';
import type { Form, Submission } from './forms.repo.js';
import { usableForm } from './usable-form.js';

// A submission's confirmation (double opt-in; docs/forms.md): the mail with its signed link, and
// what confirming does: the submitted values applied to the contact, pending cleared, the contact
// in the form's audience, contact.created (a contact never announced) or contact.updated, in one
// transaction.

/**
 * The submission applied to its contact, pending cleared, the contact in the
 * audience, the submission confirmed, and the event. `confirmed`: the
 * address's owner confirmed by the link, so its values replace the
 * contact's and an unsubscription ends; without double opt-in nothing proves
 * who typed the address, so the values only fill what the contact lacks.
 * False when the contact is gone.
 */
export async function applySubmission(
  deps: FormDeps,
  trx: Knex.Transaction,
  audienceId: string,
  sub: Submission,
  confirmed: boolean,
): Promise<boolean> {
  const c = await contactById(trx, sub.contactId);
  if (!c) return false;
  const now = deps.clock.now();
  const declared = new Map((await listProperties(trx, c.projectId)).map((p) => [p.key, p]));
  const updated: Contact = {
    ...c,
    ...submittedValues(c, sub.submitted, declared, confirmed),
    pending: false,
    unsubscribed: confirmed ? false : c.unsubscribed,
    updatedAt: now,
  };
  await updateContact(trx, updated);
  await addMembers(trx, audienceId, [c.id], now);
  await repo.markConfirmed(trx, sub.id, now);
  const [shown] = await presented(trx, c.projectId, [updated]);
  // a pending contact was never announced: its confirmation is its creation
  await insertEvents(trx, [contactEvent(c.pending ? 'contact.created' : 'contact.updated', shown, c.projectId, now)]);
  return true;
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
    deps.logger.warn(
      { form_id: form.id, project_id: project.id },
      'form confirmation not sent: the project is not approved for live mail',
    );
    return;
  }
  const url = confirmUrl(deps.publicUrl!, form.id, signConfirmToken(await deps.key(), sub.id));
  const prepared = prepareEmail(confirmationBody(form, sub.email, url, sub.submitted), deps.clock.now());
  if (prepared.template) {
    const t = prepared.template;
    const { version, rendered } = await deps.templates.renderForSend(project.id, {
      templateId: t.id,
      version: null,
      variables: t.variables,
      language: null,
      firstRecipient: sub.email,
    });
    Object.assign(prepared, {
      subject: rendered.subject,
      html: rendered.html,
      text: rendered.text,
      templateId: t.id,
      templateVersion: version,
    });
  }
  await deps.accept.submit({
    project,
    environment: form.environment,
    prepared,
    attachments: [],
    requestId: newId('request'),
    idempotency: null,
  });
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
  /** what confirming sets on the contact, as the person typed it (or someone else did) */
  values: Array<{ label: string; value: string }>;
  /** the contact's preference page */
  preferencesUrl: string | null;
}

async function confirmationOf(deps: FormDeps, form: Form, sub: Submission, confirmed: boolean): Promise<Confirmation> {
  const prefs = deps.publicUrl
    ? preferencesUrl(deps.publicUrl, signPreferenceToken(await deps.key(), sub.contactId))
    : null;
  return {
    formName: form.name,
    email: sub.email,
    confirmed,
    values: submittedList(sub.submitted),
    preferencesUrl: prefs,
  };
}

/** The form of a link and its submission, while the form's project may use it (a suspended one's links are not valid). */
async function linked(deps: FormDeps, formId: string, token: string): Promise<{ form: Form; sub: Submission } | null> {
  const sub = await submissionOf(deps, formId, token);
  const found = sub ? await usableForm(deps, formId) : null;
  return sub && found ? { form: found.form, sub } : null;
}

/** GET of a link: what it would confirm; changes nothing (link scanners follow links). Null: not valid. */
export async function describeConfirmation(
  deps: FormDeps,
  formId: string,
  token: string,
): Promise<Confirmation | null> {
  const l = await linked(deps, formId, token);
  return l ? confirmationOf(deps, l.form, l.sub, l.sub.confirmedAt !== null) : null;
}

/**
 * POST of a link: the submission applied once; again, nothing more happens.
 * Null: not valid, also when the submission, its contact or its form went
 * (pruned, deleted) after the link was checked.
 */
export async function confirmSubmission(deps: FormDeps, formId: string, token: string): Promise<Confirmation | null> {
  const l = await linked(deps, formId, token);
  if (!l) return null;
  const done = await deps.store.tx(async (trx) => {
    await lockRows(trx, 'projects', [l.form.projectId]);
    // read again under the lock: two presses of the button apply it once
    const fresh = await repo.submissionById(trx, l.sub.id);
    // the form too: its audience may go once the form has
    if (!fresh || !(await repo.formById(trx, l.form.id))) return false;
    return fresh.confirmedAt !== null || applySubmission(deps, trx, l.form.audienceId, fresh, true);
  });
  return done ? confirmationOf(deps, l.form, l.sub, true) : null;
}
