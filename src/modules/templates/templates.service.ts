import { ApiError, notFound, validationError } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import type { Clock } from '../../lib/time.js';
import { TtlCache } from '../../lib/ttl-cache.js';
import { isUniqueViolation } from '../../store/db.js';
import type { Store } from '../../store/store.js';
import { renderVersion, splitVersion, type RenderedContent } from './render-version.js';
import type { CompiledVersion, Template, TemplateVersion, TemplateVersionInfo, VersionContent } from './template.js';
import { RenderNeedsRoom } from './language/index.js';
import * as repo from './templates.repo.js';
import type { PublishTemplateBody, RenderTemplateBody, UpdateTemplateBody } from './templates.schema.js';
import { compileVersion, declaredOf } from './versions.js';

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
  renderOffThread?: (job: { version: TemplateVersion; variables: Record<string, unknown>; language: string | null }) => Promise<RenderedContent>;
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

/** Versions are immutable: a parsed one is kept for every later send, within these bounds (size in characters of its trees as JSON). */
const MAX_CACHED_VERSIONS = 1000;
const MAX_CACHED_SIZE = 64_000_000;

/** interface §4.3 and template sends (§4.1). */
export class TemplateService {
  private readonly heads: TtlCache<Template | null>;
  private readonly versions = new Map<string, { version: TemplateVersion; size: number }>();
  private cachedSize = 0;

  constructor(private readonly deps: TemplateDeps) {
    this.heads = new TtlCache(deps.headTtlMs ?? 2000, (t) => t !== null, () => deps.clock.now(), 10_000);
  }

  /** POST /v1/templates: a new template at version 1, or the next version of an existing one. */
  async publish(projectId: string, body: PublishTemplateBody): Promise<{ template: Template; version: TemplateVersion }> {
    const content: VersionContent = {
      subject: body.subject,
      html: body.html ?? null,
      text: body.text ?? null,
      design: body.design ?? null,
      translations: body.translations ?? {},
      variables: declaredOf(body.variables),
    };
    const compiled = await this.compile(content);
    const write = () =>
      this.deps.store.tx(async (trx) => {
        const now = this.deps.clock.now();
        const old = await repo.findTemplateForUpdate(trx, projectId, body.id);
        const template: Template = old
          ? { ...old, name: body.name ?? old.name, category: body.category ?? old.category, latestVersion: old.latestVersion + 1, updatedAt: now }
          : { uid: newId('template', now), projectId, id: body.id, name: body.name ?? body.id, category: body.category ?? null, split: null, latestVersion: 1, createdAt: now, updatedAt: now };
        if (old) await repo.saveTemplate(trx, template);
        else await repo.insertTemplate(trx, template);
        const version: TemplateVersion = { ...content, templateUid: template.uid, templateId: template.id, version: template.latestVersion, compiled, restoredFrom: null, createdAt: now };
        await repo.insertVersion(trx, version);
        return { template, version };
      });
    const done = await write().catch((e: unknown) => {
      // two first publishes of one id at once (PostgreSQL): the loser publishes the next version
      if (isUniqueViolation(e)) return write();
      throw e;
    });
    this.forget(projectId, body.id);
    return done;
  }

  /** GET /v1/templates: newest first. */
  list(projectId: string): Promise<Template[]> {
    return repo.listTemplates(this.deps.store.reader, projectId);
  }

  /** GET /v1/templates/{id}: the template and every version, newest first. */
  async get(projectId: string, id: string): Promise<{ template: Template; versions: TemplateVersionInfo[] }> {
    const template = await this.find(projectId, id);
    return { template, versions: await repo.listVersions(this.deps.store.reader, template) };
  }

  async version(projectId: string, id: string, version: number): Promise<TemplateVersion> {
    return this.versionOf(await this.find(projectId, id), version);
  }

  /** PATCH /v1/templates/{id}: name, category, split (every version named must exist; percents add up to 100). */
  async update(projectId: string, id: string, body: UpdateTemplateBody): Promise<Template> {
    const updated = await this.deps.store.tx(async (trx) => {
      const old = await repo.findTemplateForUpdate(trx, projectId, id);
      if (!old) throw notFound(`template ${id}`);
      if (body.split) checkSplit(body.split, old.latestVersion);
      const t: Template = {
        ...old,
        name: body.name ?? old.name,
        category: body.category === undefined ? old.category : body.category,
        split: body.split === undefined ? old.split : body.split,
        updatedAt: this.deps.clock.now(),
      };
      await repo.saveTemplate(trx, t);
      return t;
    });
    this.forget(projectId, id);
    return updated;
  }

  /** DELETE /v1/templates/{id}: the template and its versions; emails sent from it keep their content. */
  async delete(projectId: string, id: string): Promise<Template> {
    const gone = await this.deps.store.tx(async (trx) => {
      const t = await repo.findTemplateForUpdate(trx, projectId, id);
      if (!t) throw notFound(`template ${id}`);
      await repo.deleteTemplate(trx, t.uid);
      return t;
    });
    this.forget(projectId, id, gone.uid);
    return gone;
  }

  /**
   * POST /v1/templates/{id}/restore: an earlier version published again as
   * the newest, compiled from its source as a publish compiles it, so a
   * version stored before a rule it breaks (a javascript: link) is refused
   * rather than copied.
   */
  async restore(projectId: string, id: string, from: number): Promise<{ template: Template; version: TemplateVersion }> {
    const found = await this.find(projectId, id);
    const source = await this.versionOf(found, from);
    const compiled = await this.compile(contentOf(source));
    const done = await this.deps.store.tx(async (trx) => {
      const old = await repo.findTemplateForUpdate(trx, projectId, id);
      // deleted (and perhaps published again under its id) while the source compiled
      if (!old || old.uid !== found.uid) throw notFound(`template ${id}`);
      const now = this.deps.clock.now();
      const template: Template = { ...old, latestVersion: old.latestVersion + 1, updatedAt: now };
      await repo.saveTemplate(trx, template);
      const version: TemplateVersion = { ...source, compiled, version: template.latestVersion, restoredFrom: from, createdAt: now };
      await repo.insertVersion(trx, version);
      return { template, version };
    });
    this.forget(projectId, id);
    return done;
  }

  /** POST /v1/templates/{id}/render: the preview, with the same variable checks as a send. */
  async render(projectId: string, id: string, body: RenderTemplateBody): Promise<{ version: TemplateVersion; rendered: RenderedContent }> {
    const template = await this.find(projectId, id);
    const version = await this.versionOf(template, body.version ?? template.latestVersion);
    return { version, rendered: await this.rendered(version, body.variables ?? {}, body.language ?? null) };
  }

  /**
   * A template send (interface §4.1): the version named, else the split's
   * pick for the first recipient, else the latest; rendered with the send's
   * variables and language. An unknown template or version is refused as a
   * field of the send (400), not as a missing resource.
   */
  async renderForSend(projectId: string, req: TemplateSendRequest): Promise<{ version: number; rendered: RenderedContent }> {
    const template = await this.heads.get(`${projectId}\n${req.templateId}`, () => repo.findTemplate(this.deps.store.reader, projectId, req.templateId));
    if (!template) throw validationError('template_id', `no template '${req.templateId}' in this project`);
    const n = req.version ?? (template.split ? splitVersion(template.split, template.id, req.firstRecipient) : template.latestVersion);
    if (n > template.latestVersion) throw validationError('template_version', `template '${template.id}' has no version ${n} (latest is ${template.latestVersion})`);
    const version = await this.versionOf(template, n).catch((e: unknown) => {
      // deleted since its row was read (another appliance, a delete a moment ago): the send names no template
      if (e instanceof ApiError && e.code === 'not_found') throw validationError('template_id', `no template '${req.templateId}' in this project`);
      throw e;
    });
    return { version: n, rendered: await this.rendered(version, req.variables, req.language) };
  }

  /** A rendering small enough is done here; one that needs more steps than LIGHT_RENDER goes to the pool. */
  private async rendered(version: TemplateVersion, variables: Record<string, unknown>, language: string | null | undefined): Promise<RenderedContent> {
    if (!this.deps.renderOffThread) return renderVersion(version, variables, language);
    try {
      return renderVersion(version, variables, language, true);
    } catch (e) {
      if (!(e instanceof RenderNeedsRoom)) throw e;
      return this.deps.renderOffThread({ version, variables, language: language ?? null });
    }
  }

  private async compile(content: VersionContent): Promise<CompiledVersion> {
    return this.deps.compile ? this.deps.compile(content) : compileVersion(content);
  }

  private async find(projectId: string, id: string): Promise<Template> {
    const t = await repo.findTemplate(this.deps.store.reader, projectId, id);
    if (!t) throw notFound(`template ${id}`);
    return t;
  }

  private async versionOf(template: Template, n: number): Promise<TemplateVersion> {
    const key = `${template.uid}|${n}`;
    const hit = this.versions.get(key);
    if (hit) return hit.version;
    // a number past the latest is no version (and past PostgreSQL's integer column)
    const v = n <= template.latestVersion ? await repo.findVersion(this.deps.store.reader, template, n) : null;
    if (!v) throw notFound(`version ${n} of template ${template.id}`);
    const size = JSON.stringify(v.compiled).length;
    this.versions.set(key, { version: v, size });
    this.cachedSize += size;
    for (const [k, e] of this.versions) {
      if (this.versions.size <= MAX_CACHED_VERSIONS && this.cachedSize <= MAX_CACHED_SIZE) break;
      this.versions.delete(k);
      this.cachedSize -= e.size;
    }
    return v;
  }

  private forget(projectId: string, id: string, uid?: string): void {
    this.heads.delete(`${projectId}\n${id}`);
    if (uid === undefined) return;
    for (const [k, e] of this.versions) {
      if (k.startsWith(`${uid}|`)) {
        this.versions.delete(k);
        this.cachedSize -= e.size;
      }
    }
  }
}

/** What a stored version was published from. */
const contentOf = (v: TemplateVersion): VersionContent => ({ subject: v.subject, html: v.html, text: v.text, design: v.design, translations: v.translations, variables: v.variables });

function checkSplit(split: NonNullable<UpdateTemplateBody['split']>, latest: number): void {
  const seen = new Set<number>();
  split.forEach((s, i) => {
    if (s.version > latest) throw validationError(`split[${i}].version`, `version ${s.version} does not exist (the latest is ${latest})`);
    if (seen.has(s.version)) throw validationError(`split[${i}].version`, `version ${s.version} is named twice`);
    seen.add(s.version);
  });
  const total = split.reduce((n, s) => n + s.percent, 0);
  if (total !== 100) throw validationError('split', `the percents must add up to 100 (they add up to ${total})`);
}
