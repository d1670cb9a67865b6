import { ApiError, apiError, notFound, validationError } from '../../../lib/errors.js';
import type { Clock } from '../../../lib/time.js';
import { isUniqueViolation } from '../../../store/db.js';
import type { Store } from '../../../store/store.js';
import { renderVersion, splitVersion, type RenderedContent } from './render-version.js';
import type { CompiledVersion, Template, TemplateVersion, TemplateVersionInfo, VersionContent } from './template.js';
import { TemplateCache } from './template-cache.js';
import {
  checkSplit,
  contentOf,
  publishedContent,
  publishedTemplate,
  publishedVersion,
  updatedTemplate,
} from './template-changes.js';
import { RenderNeedsRoom } from './language/index.js';
import * as repo from './templates.repo.js';
import type {
  PublishTemplateBody,
  RenderDraftBody,
  RenderTemplateBody,
  UpdateTemplateBody,
} from './templates.schema.js';
import { compileVersion } from './versions.js';

export interface TemplateDeps {
  store: Store;
  clock: Clock;
  /**
   * How long a template's row (latest version, split) is trusted without a
   * read. Writes through this service forget it at once; the delay only
   * matters for another appliance sharing a PostgreSQL store.
   */
  headTtlMs?: number;
  /**
   * Where a version is compiled at publish and where a rendering too large
   * for this thread goes (the parsing pool in serve: docs/security.md);
   * without them, here.
   */
  compile?: (content: VersionContent) => Promise<CompiledVersion>;
  renderOffThread?: (job: {
    version: TemplateVersion;
    variables: Record<string, unknown>;
    language: string | null;
  }) => Promise<RenderedContent>;
}

/** What a template send needs (interface §4.1). */
export interface TemplateSendRequest {
  templateId: string;
  version: number | null;
  variables: Record<string, unknown>;
  language: string | null;
  /** the first recipient: a split gives one address always the same version */
  firstRecipient: string;
}

/** What a publish asks beyond its body (POST /v1/templates asks none of it). */
export interface PublishOptions {
  /** `new`: an id the project has is refused (409 conflict); `existing`: one it has not (404) */
  id?: 'new' | 'existing';
  /** the source as the client wrote it in another syntax (TemplateVersionInfo.foreignSource) */
  foreignSource?: unknown;
}

/** The service's deps and its cache of template rows and versions. */
interface Templates extends TemplateDeps {
  cache: TemplateCache;
}

/** POST /v1/templates: a new template at version 1, or the next version of an existing one. */
async function publish(
  t: Templates,
  projectId: string,
  body: PublishTemplateBody,
  opts: PublishOptions = {},
): Promise<{ template: Template; version: TemplateVersion }> {
  const content = publishedContent(body);
  const compiled = await compile(t, content);
  const write = () =>
    t.store.tx(async (trx) => {
      const now = t.clock.now();
      const old = await repo.findTemplateForUpdate(trx, projectId, body.id);
      if (opts.id === 'new' && old) throw apiError('conflict', `template ${body.id} exists already`);
      if (opts.id === 'existing' && !old) throw notFound(`template ${body.id}`);
      const template = publishedTemplate(old, projectId, body, now);
      if (old) await repo.saveTemplate(trx, template);
      else await repo.insertTemplate(trx, template);
      const version = publishedVersion(template, content, compiled, now, opts.foreignSource ?? null);
      await repo.insertVersion(trx, version);
      return { template, version };
    });
  const done = await write().catch((e: unknown) => {
    // two first publishes of one id at once (PostgreSQL): the loser publishes the next version
    if (isUniqueViolation(e)) return write();
    throw e;
  });
  t.cache.forget(projectId, body.id);
  return done;
}

/** GET /v1/templates/{id}: the template and every version, newest first. */
async function getTemplate(
  t: Templates,
  projectId: string,
  id: string,
): Promise<{ template: Template; versions: TemplateVersionInfo[] }> {
  const template = await find(t, projectId, id);
  return { template, versions: await repo.listVersions(t.store.reader, template) };
}

/** PATCH /v1/templates/{id}: name, category, split (every version named must exist; percents add up to 100). */
async function update(t: Templates, projectId: string, id: string, body: UpdateTemplateBody): Promise<Template> {
  const updated = await t.store.tx(async (trx) => {
    const old = await repo.findTemplateForUpdate(trx, projectId, id);
    if (!old) throw notFound(`template ${id}`);
    if (body.split) checkSplit(body.split, old.latestVersion);
    const changed = updatedTemplate(old, body, t.clock.now());
    await repo.saveTemplate(trx, changed);
    return changed;
  });
  t.cache.forget(projectId, id);
  return updated;
}

/** DELETE /v1/templates/{id}: the template and its versions; emails sent from it keep their content. */
async function deleteTemplate(t: Templates, projectId: string, id: string): Promise<Template> {
  const gone = await t.store.tx(async (trx) => {
    const found = await repo.findTemplateForUpdate(trx, projectId, id);
    if (!found) throw notFound(`template ${id}`);
    await repo.deleteTemplate(trx, found.uid);
    return found;
  });
  t.cache.forget(projectId, id, gone.uid);
  return gone;
}

/**
 * POST /v1/templates/{id}/restore: an earlier version published again as
 * the newest, compiled from its source as a publish compiles it, so a
 * version stored before a rule it breaks (a javascript: link) is refused
 * rather than copied.
 */
async function restore(
  t: Templates,
  projectId: string,
  id: string,
  from: number,
): Promise<{ template: Template; version: TemplateVersion }> {
  const found = await find(t, projectId, id);
  const source = await versionOf(t, found, from);
  const compiled = await compile(t, contentOf(source));
  const done = await t.store.tx(async (trx) => {
    const old = await repo.findTemplateForUpdate(trx, projectId, id);
    // deleted (and perhaps published again under its id) while the source compiled
    if (!old || old.uid !== found.uid) throw notFound(`template ${id}`);
    const now = t.clock.now();
    const template: Template = { ...old, latestVersion: old.latestVersion + 1, updatedAt: now };
    await repo.saveTemplate(trx, template);
    const version: TemplateVersion = {
      ...source,
      compiled,
      version: template.latestVersion,
      restoredFrom: from,
      createdAt: now,
    };
    await repo.insertVersion(trx, version);
    return { template, version };
  });
  t.cache.forget(projectId, id);
  return done;
}

/** POST /v1/templates/{id}/render: the preview, with the same variable checks as a send. */
async function preview(
  t: Templates,
  projectId: string,
  id: string,
  body: RenderTemplateBody,
): Promise<{ version: TemplateVersion; rendered: RenderedContent }> {
  const template = await find(t, projectId, id);
  const version = await versionOf(t, template, body.version ?? template.latestVersion);
  return { version, rendered: await rendered(t, version, body.variables ?? {}, body.language ?? null) };
}

/** POST /v1/templates/render: a draft compiled as a publish would (off the thread), rendered as a send; nothing stored. */
async function renderDraft(t: Templates, body: RenderDraftBody): Promise<RenderedContent> {
  let version: TemplateVersion;
  try {
    const content = publishedContent({ id: 'draft', ...body.template });
    const draft = { uid: '', id: '', latestVersion: 0 } as Template;
    version = publishedVersion(draft, content, await compile(t, content), t.clock.now());
  } catch (e) {
    if (e instanceof ApiError && e.code === 'validation_error' && e.field) {
      // `html line 1, column 4: …` and `design.blocks[0].url: …` name their field first
      const rest = e.message.startsWith(e.field) ? e.message.slice(e.field.length) : `: ${e.message}`;
      throw new ApiError(400, 'validation_error', `template.${e.field}${rest}`, `template.${e.field}`);
    }
    throw e;
  }
  return rendered(t, version, body.variables ?? {}, body.language ?? null);
}

/**
 * A template send (interface §4.1): the version named, else the split's
 * pick for the first recipient, else the latest; rendered with the send's
 * variables and language. An unknown template or version is refused as a
 * field of the send (400), not as a missing resource.
 */
async function renderForSend(
  t: Templates,
  projectId: string,
  req: TemplateSendRequest,
): Promise<{ version: number; rendered: RenderedContent }> {
  const template = await t.cache.head(projectId, req.templateId, () =>
    repo.findTemplate(t.store.reader, projectId, req.templateId),
  );
  if (!template) throw validationError('template_id', `no template '${req.templateId}' in this project`);
  const n =
    req.version ??
    (template.split ? splitVersion(template.split, template.id, req.firstRecipient) : template.latestVersion);
  if (n > template.latestVersion)
    throw validationError(
      'template_version',
      `template '${template.id}' has no version ${n} (latest is ${template.latestVersion})`,
    );
  const version = await versionOf(t, template, n).catch((e: unknown) => {
    // deleted since its row was read (another appliance, a delete a moment ago): the send names no template
    if (e instanceof ApiError && e.code === 'not_found')
      throw validationError('template_id', `no template '${req.templateId}' in this project`);
    throw e;
  });
  return { version: n, rendered: await rendered(t, version, req.variables, req.language) };
}

/** A rendering small enough is done here; one that needs more steps than LIGHT_RENDER goes to the pool. */
async function rendered(
  t: Templates,
  version: TemplateVersion,
  variables: Record<string, unknown>,
  language: string | null | undefined,
): Promise<RenderedContent> {
  if (!t.renderOffThread) return renderVersion(version, variables, language);
  try {
    return renderVersion(version, variables, language, true);
  } catch (e) {
    if (!(e instanceof RenderNeedsRoom)) throw e;
    return t.renderOffThread({ version, variables, language: language ?? null });
  }
}

async function compile(t: Templates, content: VersionContent): Promise<CompiledVersion> {
  return t.compile ? t.compile(content) : compileVersion(content);
}

async function find(t: Templates, projectId: string, id: string): Promise<Template> {
  const found = await repo.findTemplate(t.store.reader, projectId, id);
  if (!found) throw notFound(`template ${id}`);
  return found;
}

async function versionOf(t: Templates, template: Template, n: number): Promise<TemplateVersion> {
  const hit = t.cache.version(template.uid, n);
  if (hit) return hit;
  // a number past the latest is no version (and past PostgreSQL's integer column)
  const v = n <= template.latestVersion ? await repo.findVersion(t.store.reader, template, n) : null;
  if (!v) throw notFound(`version ${n} of template ${template.id}`);
  t.cache.keepVersion(template.uid, n, v);
  return v;
}

/** interface §4.3 and template sends (§4.1). */
export function templateService(deps: TemplateDeps) {
  const t: Templates = { ...deps, cache: new TemplateCache(deps.clock, deps.headTtlMs ?? 2000) };
  return {
    publish: (projectId: string, body: PublishTemplateBody, opts?: PublishOptions) => publish(t, projectId, body, opts),
    /** GET /v1/templates: newest first. */
    list: (projectId: string): Promise<Template[]> => repo.listTemplates(t.store.reader, projectId),
    /** When each template's latest version was published, by uid. */
    publishedTimes: (templates: Template[]) =>
      repo.latestVersionTimes(
        t.store.reader,
        templates.map((x) => x.uid),
      ),
    get: (projectId: string, id: string) => getTemplate(t, projectId, id),
    version: async (projectId: string, id: string, version: number) =>
      versionOf(t, await find(t, projectId, id), version),
    update: (projectId: string, id: string, body: UpdateTemplateBody) => update(t, projectId, id, body),
    delete: (projectId: string, id: string) => deleteTemplate(t, projectId, id),
    restore: (projectId: string, id: string, from: number) => restore(t, projectId, id, from),
    render: (projectId: string, id: string, body: RenderTemplateBody) => preview(t, projectId, id, body),
    renderDraft: (body: RenderDraftBody) => renderDraft(t, body),
    renderForSend: (projectId: string, req: TemplateSendRequest) => renderForSend(t, projectId, req),
  };
}

export type TemplateService = ReturnType<typeof templateService>;
