import { ApiError, notFound, validationError } from '../../../lib/errors.js';
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
import type { PublishTemplateBody, RenderTemplateBody, UpdateTemplateBody } from './templates.schema.js';
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

/** interface §4.3 and template sends (§4.1). */
export class TemplateService {
  private readonly cache: TemplateCache;

  constructor(private readonly deps: TemplateDeps) {
    this.cache = new TemplateCache(deps.clock, deps.headTtlMs ?? 2000);
  }

  /** POST /v1/templates: a new template at version 1, or the next version of an existing one. */
  async publish(
    projectId: string,
    body: PublishTemplateBody,
  ): Promise<{ template: Template; version: TemplateVersion }> {
    const content = publishedContent(body);
    const compiled = await this.compile(content);
    const write = () =>
      this.deps.store.tx(async (trx) => {
        const now = this.deps.clock.now();
        const old = await repo.findTemplateForUpdate(trx, projectId, body.id);
        const template = publishedTemplate(old, projectId, body, now);
        if (old) await repo.saveTemplate(trx, template);
        else await repo.insertTemplate(trx, template);
        const version = publishedVersion(template, content, compiled, now);
        await repo.insertVersion(trx, version);
        return { template, version };
      });
    const done = await write().catch((e: unknown) => {
      // two first publishes of one id at once (PostgreSQL): the loser publishes the next version
      if (isUniqueViolation(e)) return write();
      throw e;
    });
    this.cache.forget(projectId, body.id);
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
      const t = updatedTemplate(old, body, this.deps.clock.now());
      await repo.saveTemplate(trx, t);
      return t;
    });
    this.cache.forget(projectId, id);
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
    this.cache.forget(projectId, id, gone.uid);
    return gone;
  }

  /**
   * POST /v1/templates/{id}/restore: an earlier version published again as
   * the newest, compiled from its source as a publish compiles it, so a
   * version stored before a rule it breaks (a javascript: link) is refused
   * rather than copied.
   */
  async restore(
    projectId: string,
    id: string,
    from: number,
  ): Promise<{ template: Template; version: TemplateVersion }> {
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
    this.cache.forget(projectId, id);
    return done;
  }

  /** POST /v1/templates/{id}/render: the preview, with the same variable checks as a send. */
  async render(
    projectId: string,
    id: string,
    body: RenderTemplateBody,
  ): Promise<{ version: TemplateVersion; rendered: RenderedContent }> {
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
  async renderForSend(
    projectId: string,
    req: TemplateSendRequest,
  ): Promise<{ version: number; rendered: RenderedContent }> {
    const template = await this.cache.head(projectId, req.templateId, () =>
      repo.findTemplate(this.deps.store.reader, projectId, req.templateId),
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
    const version = await this.versionOf(template, n).catch((e: unknown) => {
      // deleted since its row was read (another appliance, a delete a moment ago): the send names no template
      if (e instanceof ApiError && e.code === 'not_found')
        throw validationError('template_id', `no template '${req.templateId}' in this project`);
      throw e;
    });
    return { version: n, rendered: await this.rendered(version, req.variables, req.language) };
  }

  /** A rendering small enough is done here; one that needs more steps than LIGHT_RENDER goes to the pool. */
  private async rendered(
    version: TemplateVersion,
    variables: Record<string, unknown>,
    language: string | null | undefined,
  ): Promise<RenderedContent> {
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
    const hit = this.cache.version(template.uid, n);
    if (hit) return hit;
    // a number past the latest is no version (and past PostgreSQL's integer column)
    const v = n <= template.latestVersion ? await repo.findVersion(this.deps.store.reader, template, n) : null;
    if (!v) throw notFound(`version ${n} of template ${template.id}`);
    this.cache.keepVersion(template.uid, n, v);
    return v;
  }
}
