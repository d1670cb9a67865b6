import type { Knex } from 'knex';
import { parseAddress } from '../../../lib/address.js';
import { apiError, ApiError, notFound, validationError } from '../../../lib/errors.js';
import { newId } from '../../../lib/ids.js';
import { idPage, type Page } from '../../../lib/page.js';
import { lockRows } from '../../../store/db.js';
import { findAudience } from '../audiences/audiences.repo.js';
import { listProperties } from '../contacts/contacts.repo.js';
import { listDomains } from '../../deliverability/domains/domains.repo.js';
import type { Project } from '../../account/projects/projects.repo.js';
import { checkFields, checkOrigins, checkRedirectUrl } from './form-rules.js';
import type { FormDeps } from './form-deps.js';
import { formSubmissions } from './form-submissions.service.js';
import * as repo from './forms.repo.js';
import type { Form, FormEnvironment } from './forms.repo.js';
import type { CreateFormBody, UpdateFormBody } from './forms.schema.js';

export type { FormDeps };

const ok = <T>(r: { ok: true; value: T } | { ok: false; field: string; reason: string }): T => {
  if (!r.ok) throw validationError(r.field, r.reason);
  return r.value;
};

/** The confirmation mail's From: an address at a domain of the project, verified for a live form (as the accept requires). */
async function checkFrom(trx: Knex.Transaction, project: Project, f: Form): Promise<void> {
  if (f.from === null) {
    if (f.doubleOptIn)
      throw validationError('from', 'is required when double_opt_in is true: the confirmation mail is sent from it');
    return;
  }
  const parsed = parseAddress(f.from);
  if (!parsed.ok) throw validationError('from', parsed.reason);
  const domain = (await listDomains(trx, project.id)).find((d) => d.name === parsed.value.domain);
  if (!domain)
    throw validationError('from', `${parsed.value.domain} is not a domain of this project (POST /v1/domains adds it)`);
  if (f.environment === 'live' && domain.status !== 'verified')
    throw apiError(
      'domain_not_verified',
      `from: the domain ${domain.name} is not verified; a live form's confirmation mail is sent like any live email`,
    );
  if (f.environment === 'live' && f.doubleOptIn && !project.approved)
    throw apiError(
      'account_not_approved',
      "live sending waits for this project to be approved; a test key's form works meanwhile",
    );
}

async function checkTemplate(deps: FormDeps, projectId: string, id: string | null): Promise<void> {
  if (id === null) return;
  try {
    await deps.templates.get(projectId, id);
  } catch (e) {
    if (e instanceof ApiError && e.code === 'not_found')
      throw validationError('confirm_template_id', `no template '${id}' in this project`);
    throw e;
  }
}

/** Every rule of a form as it would be stored; errors name the field. The caller holds the project's lock. */
async function checkForm(
  deps: FormDeps,
  trx: Knex.Transaction,
  project: Project,
  f: Form,
  given: UpdateFormBody,
): Promise<Form> {
  if (!(await findAudience(trx, project.id, f.audienceId))) throw notFound(`audience ${f.audienceId}`);
  const declared = new Map((await listProperties(trx, project.id)).map((p) => [p.key, p]));
  const checked: Form = {
    ...f,
    fields: given.fields !== undefined ? ok(checkFields(given.fields, declared)) : f.fields,
  };
  if (given.redirect_url) checked.redirectUrl = ok(checkRedirectUrl(given.redirect_url, deps.allowPrivate));
  if (given.allowed_origins) checked.allowedOrigins = ok(checkOrigins(given.allowed_origins, deps.allowPrivate));
  if (checked.doubleOptIn && !deps.publicUrl)
    throw validationError('double_opt_in', 'needs http.public_url: the confirmation link is under it');
  await checkFrom(trx, project, checked);
  await checkTemplate(deps, project.id, checked.confirmTemplateId);
  return checked;
}

async function createForm(
  deps: FormDeps,
  project: Project,
  environment: FormEnvironment,
  body: CreateFormBody,
): Promise<Form> {
  const now = deps.clock.now();
  const draft: Form = {
    id: newId('form', now),
    projectId: project.id,
    name: body.name,
    audienceId: body.audience_id,
    fields: ['email'],
    doubleOptIn: body.double_opt_in ?? true,
    from: body.from ?? null,
    confirmTemplateId: body.confirm_template_id ?? null,
    redirectUrl: body.redirect_url ?? null,
    allowedOrigins: [],
    environment,
    createdAt: now,
    updatedAt: now,
  };
  // under the project's lock, so that the audience or a property it uses is not deleted meanwhile
  return deps.store.tx(async (trx) => {
    await lockRows(trx, 'projects', [project.id]);
    const checked = await checkForm(deps, trx, project, draft, body);
    await repo.insertForm(trx, checked);
    return checked;
  });
}

/**
 * A test key reads a live form but does not change or delete it: it would
 * change live mail, which it cannot send (as it cannot make a live key).
 */
function checkKeyMode(f: Form, mode: FormEnvironment): void {
  if (f.environment === 'live' && mode === 'test')
    throw apiError('forbidden', `a test key cannot change or delete the live form ${f.id}; use a live key`);
}

async function updateFormOf(
  deps: FormDeps,
  project: Project,
  mode: FormEnvironment,
  id: string,
  body: UpdateFormBody,
): Promise<Form> {
  return deps.store.tx(async (trx) => {
    await lockRows(trx, 'projects', [project.id]);
    const current = await repo.findForm(trx, project.id, id);
    if (!current) throw notFound(`form ${id}`);
    checkKeyMode(current, mode);
    const changed: Form = {
      ...current,
      name: body.name ?? current.name,
      audienceId: body.audience_id ?? current.audienceId,
      doubleOptIn: body.double_opt_in ?? current.doubleOptIn,
      from: body.from !== undefined ? body.from : current.from,
      confirmTemplateId: body.confirm_template_id !== undefined ? body.confirm_template_id : current.confirmTemplateId,
      redirectUrl: body.redirect_url !== undefined ? body.redirect_url : current.redirectUrl,
      updatedAt: deps.clock.now(),
    };
    const checked = await checkForm(deps, trx, project, changed, body);
    await repo.updateForm(trx, checked);
    return checked;
  });
}

export function formService(deps: FormDeps) {
  const existing = async (projectId: string, id: string) => {
    const f = await repo.findForm(deps.store.reader, projectId, id);
    if (!f) throw notFound(`form ${id}`);
    return f;
  };
  return {
    create: (project: Project, environment: FormEnvironment, body: CreateFormBody) =>
      createForm(deps, project, environment, body),
    /** `mode`: the key's; the form keeps its environment whichever key changes it */
    update: (project: Project, mode: FormEnvironment, id: string, body: UpdateFormBody) =>
      updateFormOf(deps, project, mode, id, body),
    get: (projectId: string, id: string) => existing(projectId, id),
    list: async (projectId: string, limit: number, cursor: string | undefined): Promise<Page<Form>> =>
      idPage(await repo.pageOfForms(deps.store.reader, projectId, limit, cursor), limit),
    /** the form's public page, under http.public_url (null without one) */
    pageUrl: (f: Form): string | null => (deps.publicUrl ? `${deps.publicUrl.replace(/\/+$/, '')}/f/${f.id}` : null),
    /** the form deleted */
    delete: async (projectId: string, mode: FormEnvironment, id: string): Promise<Form> => {
      const f = await existing(projectId, id);
      checkKeyMode(f, mode);
      // its submissions stay until pruned: the pending contacts they made go with them
      await deps.store.tx((trx) => repo.deleteForm(trx, f.id));
      return f;
    },
    ...formSubmissions(deps),
  };
}

export type FormService = ReturnType<typeof formService>;
