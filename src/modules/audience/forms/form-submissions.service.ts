import type { Knex } from 'knex';
import { apiError, notFound, validationError } from '../../../lib/errors.js';
import { newId } from '../../../lib/ids.js';
import { clientKey, RateLimiter } from '../../../lib/rate-limiter.js';
import { lockRows } from '../../../store/db.js';
import type { PropertyType } from '../contacts/contact-properties.js';
import { findContact, insertContact, type Contact } from '../contacts/contacts.repo.js';
import { CONFIRM_WINDOW_MS } from './confirm-token.js';
import {
  applySubmission,
  confirmSubmission,
  describeConfirmation,
  sendConfirmation,
} from './form-confirmation.service.js';
import type { FormDeps } from './form-deps.js';
import { fieldLabel, readSubmission } from './form-rules.js';
import * as repo from './forms.repo.js';
import type { Form, Submission, Submitted } from './forms.repo.js';
import { usableForm } from './usable-form.js';

// The public side of signup forms (docs/forms.md): the page's content, a submission, its
// confirmation link, and the pruning of pending contacts never confirmed. Nothing here tells
// whether an address is known: every valid submission gets the same answer.

/** At most one confirmation mail per address per form in this window. */
const REMAIL_MS = 10 * 60_000;

export interface FormPage {
  id: string;
  name: string;
  doubleOptIn: boolean;
  allowedOrigins: string[];
  /** the origin of redirect_url: the page's Content-Security-Policy lets its form go there (browsers check the 303's target too) */
  redirectOrigin: string | null;
  fields: Array<{ key: string; label: string; type: 'email' | 'name' | PropertyType }>;
}

export interface SubmitAnswer {
  status: 'pending_confirmation' | 'subscribed';
  redirectUrl: string | null;
}

async function formPage(deps: FormDeps, id: string): Promise<FormPage | null> {
  const found = await usableForm(deps, id);
  if (!found) return null;
  const { form, declared } = found;
  const typeOf = (key: string) =>
    key === 'email'
      ? ('email' as const)
      : key === 'first_name' || key === 'last_name'
        ? ('name' as const)
        : declared.get(key)?.type;
  return {
    id: form.id,
    name: form.name,
    doubleOptIn: form.doubleOptIn,
    allowedOrigins: form.allowedOrigins,
    redirectOrigin: form.redirectUrl ? new URL(form.redirectUrl).origin : null,
    // a property deleted since the form was made is no longer asked for
    fields: form.fields.flatMap((key) => (typeOf(key) ? [{ key, label: fieldLabel(key), type: typeOf(key)! }] : [])),
  };
}

/**
 * The submission stored: an unknown address becomes a pending contact with
 * the submitted values; a known one is left as it is until it confirms. With
 * double opt-in, a second submission of the address within REMAIL_MS stores
 * nothing (null: no mail goes out); without it, it applies at once, filling
 * only what a known contact lacks.
 */
async function recordSubmission(
  deps: FormDeps,
  trx: Knex.Transaction,
  form: Form,
  email: string,
  submitted: Submitted,
): Promise<Submission | null> {
  // the lock creating a contact takes (contacts.service.ts): two requests never make the same address
  await lockRows(trx, 'projects', [form.projectId]);
  const now = deps.clock.now();
  if (form.doubleOptIn && (await repo.submittedSince(trx, form.id, email, now - REMAIL_MS))) return null;
  let contact = await findContact(trx, form.projectId, email);
  const createdContact = !contact;
  if (!contact) {
    contact = {
      id: newId('contact', now),
      projectId: form.projectId,
      email,
      firstName: submitted.first_name ?? null,
      lastName: submitted.last_name ?? null,
      properties: submitted.properties,
      unsubscribed: false,
      pending: true,
      createdAt: now,
      updatedAt: now,
    } satisfies Contact;
    await insertContact(trx, contact);
  }
  const sub: Submission = {
    id: newId('formSubmission', now),
    formId: form.id,
    projectId: form.projectId,
    contactId: contact.id,
    email,
    submitted,
    createdContact,
    confirmedAt: null,
    createdAt: now,
  };
  await repo.insertSubmission(trx, sub);
  if (!form.doubleOptIn) await applySubmission(deps, trx, form.audienceId, sub, false);
  return sub;
}

/**
 * The confirmation mails go to the accept after the answer, never waited
 * for: how long the accept takes (or that it refuses a suppressed address at
 * once) must not show in how long a submission takes. Refusals and failures
 * are logged; drain() waits for the mails handed over so far.
 */
function confirmationMailer(deps: FormDeps) {
  const mailing = new Set<Promise<void>>();
  return {
    later(form: Form, sub: Submission): void {
      const p = sendConfirmation(deps, form, sub)
        .catch((e: unknown) => deps.logger.warn({ err: e, form_id: form.id }, 'form confirmation mail not accepted'))
        .finally(() => mailing.delete(p));
      mailing.add(p);
    },
    async drain(): Promise<void> {
      while (mailing.size) await Promise.all([...mailing]);
    },
  };
}

export function formSubmissions(deps: FormDeps) {
  const perIp = new RateLimiter(deps.limits.perIpPerHour / 3600, deps.clock, deps.limits.perIpPerHour);
  const perForm = new RateLimiter(deps.limits.perFormPerMinute / 60, deps.clock, deps.limits.perFormPerMinute);
  const limited = (wait: number) =>
    apiError('rate_limited', `too many submissions right now: retry in ${wait} s`, { 'Retry-After': String(wait) });
  const mails = confirmationMailer(deps);

  /**
   * The client's limit checked without taking, then the form's taken, then the
   * client's: a submission the form refuses leaves no bucket for its client
   * behind, and a client past its own limit uses none of the form's.
   */
  const admit = (formId: string, ip: string) => {
    const client = `${formId}|${clientKey(ip)}`;
    const wait = perIp.wait(client) ?? perForm.take(formId);
    if (wait !== null) throw limited(wait);
    perIp.take(client);
  };

  /** POST /f/{id}: `input` the page's fields or the JSON body; throws ApiError (404, 429, 400 naming the field). */
  const submit = async (formId: string, ip: string, input: Record<string, unknown>): Promise<SubmitAnswer> => {
    const found = await usableForm(deps, formId);
    if (!found) throw notFound(`form ${formId}`);
    const { form, declared } = found;
    admit(form.id, ip);
    const read = readSubmission(input, form.fields, declared);
    if (!read.ok) throw validationError(read.field, read.reason);
    const answer: SubmitAnswer = {
      status: form.doubleOptIn ? 'pending_confirmation' : 'subscribed',
      redirectUrl: form.redirectUrl,
    };
    // a bot that filled the honeypot is told it worked, and nothing is stored or sent
    if (read.honeypot) return answer;
    const sub = await deps.store.tx((trx) => recordSubmission(deps, trx, form, read.email, read.submitted));
    if (sub && form.doubleOptIn) mails.later(form, sub);
    return answer;
  };

  return {
    page: (id: string) => formPage(deps, id),
    submit,
    describeConfirmation: (formId: string, token: string) => describeConfirmation(deps, formId, token),
    confirm: (formId: string, token: string) => confirmSubmission(deps, formId, token),
    /** Resolves once the confirmation mails handed over so far are accepted or refused (the API's stop; tests). */
    drain: () => mails.drain(),
    /** Pending contacts not confirmed in time go, with the submissions past the window. */
    prunePending: () => deps.store.tx((trx) => repo.pruneUnconfirmed(trx, deps.clock.now() - CONFIRM_WINDOW_MS)),
  };
}
