import { projectRowsPage, type Db } from '../../../store/db.js';
import type { PropertyValue } from '../contacts/contact-properties.js';

export type FormEnvironment = 'live' | 'test';

export interface Form {
  id: string;
  projectId: string;
  name: string;
  audienceId: string;
  /** email first, then first_name, last_name and declared property keys, in the page's order */
  fields: string[];
  doubleOptIn: boolean;
  /** the confirmation mail's From */
  from: string | null;
  confirmTemplateId: string | null;
  redirectUrl: string | null;
  allowedOrigins: string[];
  /** the mode of the key that made it */
  environment: FormEnvironment;
  createdAt: number;
  updatedAt: number;
}

/** What a submission asks to set on its contact, applied at confirmation. */
export interface Submitted {
  first_name?: string;
  last_name?: string;
  properties: Record<string, PropertyValue>;
}

export interface Submission {
  id: string;
  formId: string | null;
  projectId: string;
  contactId: string;
  email: string;
  submitted: Submitted;
  createdContact: boolean;
  confirmedAt: number | null;
  createdAt: number;
}

interface FormRow {
  id: string;
  project_id: string;
  name: string;
  audience_id: string;
  fields: string;
  double_opt_in: number | boolean;
  from_address: string | null;
  confirm_template_id: string | null;
  redirect_url: string | null;
  allowed_origins: string;
  environment: string;
  created_at: number | string;
  updated_at: number | string;
}

const fromRow = (r: FormRow): Form => ({
  id: r.id,
  projectId: r.project_id,
  name: r.name,
  audienceId: r.audience_id,
  fields: JSON.parse(r.fields) as string[],
  doubleOptIn: Boolean(r.double_opt_in),
  from: r.from_address,
  confirmTemplateId: r.confirm_template_id,
  redirectUrl: r.redirect_url,
  allowedOrigins: JSON.parse(r.allowed_origins) as string[],
  environment: r.environment as FormEnvironment,
  createdAt: Number(r.created_at),
  updatedAt: Number(r.updated_at),
});

const toRow = (f: Form): FormRow => ({
  id: f.id,
  project_id: f.projectId,
  name: f.name,
  audience_id: f.audienceId,
  fields: JSON.stringify(f.fields),
  double_opt_in: f.doubleOptIn,
  from_address: f.from,
  confirm_template_id: f.confirmTemplateId,
  redirect_url: f.redirectUrl,
  allowed_origins: JSON.stringify(f.allowedOrigins),
  environment: f.environment,
  created_at: f.createdAt,
  updated_at: f.updatedAt,
});

export async function insertForm(db: Db, f: Form): Promise<void> {
  await db('forms').insert(toRow(f));
}

export async function updateForm(db: Db, f: Form): Promise<void> {
  const { id, project_id: _p, created_at: _c, environment: _e, ...rest } = toRow(f);
  await db('forms').where({ id }).update(rest);
}

export async function deleteForm(db: Db, id: string): Promise<void> {
  await db('forms').where({ id }).delete();
}

export async function findForm(db: Db, projectId: string, id: string): Promise<Form | null> {
  const row = (await db('forms').select('*').where({ project_id: projectId, id }).first()) as FormRow | undefined;
  return row ? fromRow(row) : null;
}

/** A form by id alone: its public page names no project. */
export async function formById(db: Db, id: string): Promise<Form | null> {
  const row = (await db('forms').select('*').where({ id }).first()) as FormRow | undefined;
  return row ? fromRow(row) : null;
}

/** One page, newest first (`limit + 1` rows: whether more follow). */
export async function pageOfForms(
  db: Db,
  projectId: string,
  limit: number,
  before: string | undefined,
): Promise<Form[]> {
  return (await projectRowsPage<FormRow>(db, 'forms', projectId, limit, before)).map(fromRow);
}

interface SubmissionRow {
  id: string;
  form_id: string | null;
  project_id: string;
  contact_id: string;
  email: string;
  submitted: string;
  created_contact: number | boolean;
  confirmed_at: number | string | null;
  created_at: number | string;
}

export async function insertSubmission(db: Db, s: Submission): Promise<void> {
  await db('form_submissions').insert({
    id: s.id,
    form_id: s.formId,
    project_id: s.projectId,
    contact_id: s.contactId,
    email: s.email,
    submitted: JSON.stringify(s.submitted),
    created_contact: s.createdContact,
    confirmed_at: s.confirmedAt,
    created_at: s.createdAt,
  });
}

export async function submissionById(db: Db, id: string): Promise<Submission | null> {
  const r = (await db('form_submissions').select('*').where({ id }).first()) as SubmissionRow | undefined;
  if (!r) return null;
  return {
    id: r.id,
    formId: r.form_id,
    projectId: r.project_id,
    contactId: r.contact_id,
    email: r.email,
    submitted: JSON.parse(r.submitted) as Submitted,
    createdContact: Boolean(r.created_contact),
    confirmedAt: r.confirmed_at === null ? null : Number(r.confirmed_at),
    createdAt: Number(r.created_at),
  };
}

/** Whether the address submitted this form since `since`: a confirmation mail went out for it then. */
export async function submittedSince(db: Db, formId: string, email: string, since: number): Promise<boolean> {
  return (
    (await db('form_submissions')
      .select('id')
      .where({ form_id: formId, email })
      .andWhere('created_at', '>=', since)
      .first()) !== undefined
  );
}

export async function markConfirmed(db: Db, id: string, now: number): Promise<void> {
  await db('form_submissions').where({ id }).update({ confirmed_at: now });
}

/**
 * Deletes the pending contacts made before `cutoff` that have no submission
 * since (the link of a later one still works); then every submission made
 * before the cutoff. Only a form makes a pending contact, and a contact
 * keeps its own age: the submission that made it may be gone already.
 * Returns how many contacts went.
 */
export async function pruneUnconfirmed(db: Db, cutoff: number): Promise<number> {
  const submittedSinceCutoff = db('form_submissions').select('contact_id').where('created_at', '>=', cutoff);
  const contacts = await db('contacts')
    .where({ pending: true })
    .andWhere('created_at', '<', cutoff)
    .whereNotIn('id', submittedSinceCutoff)
    .delete();
  await db('form_submissions').where('created_at', '<', cutoff).delete();
  return contacts;
}
