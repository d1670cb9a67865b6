import type { Clock } from '../../../lib/time.js';
import { TtlCache } from '../../../lib/ttl-cache.js';
import type { Template, TemplateVersion } from './template.js';

// What the template service keeps between requests: each template's row for
// a moment (every template send reads it), and each version it has read, for
// good (versions are immutable). Writes through the service forget at once.

/** Versions are immutable: a parsed one is kept for every later send, within these bounds (size in characters of its trees as JSON). */
const MAX_CACHED_VERSIONS = 1000;
const MAX_CACHED_SIZE = 64_000_000;

export class TemplateCache {
  private readonly heads: TtlCache<Template | null>;
  private readonly versions = new Map<string, { version: TemplateVersion; size: number }>();
  private cachedSize = 0;

  constructor(clock: Clock, headTtlMs: number) {
    this.heads = new TtlCache(
      headTtlMs,
      (t) => t !== null,
      () => clock.now(),
      10_000,
    );
  }

  /** The template's row as last read within the TTL, else read by `load` (a missing template is not kept). */
  head(projectId: string, id: string, load: () => Promise<Template | null>): Promise<Template | null> {
    return this.heads.get(`${projectId}\n${id}`, load);
  }

  version(templateUid: string, n: number): TemplateVersion | undefined {
    return this.versions.get(`${templateUid}|${n}`)?.version;
  }

  /** Keep a version read from the store; the oldest kept go first once past the bounds. */
  keepVersion(templateUid: string, n: number, v: TemplateVersion): void {
    const size = JSON.stringify(v.compiled).length;
    this.versions.set(`${templateUid}|${n}`, { version: v, size });
    this.cachedSize += size;
    for (const [k, e] of this.versions) {
      if (this.versions.size <= MAX_CACHED_VERSIONS && this.cachedSize <= MAX_CACHED_SIZE) break;
      this.versions.delete(k);
      this.cachedSize -= e.size;
    }
  }

  /** After a write: the template's row; with its uid (a delete), every version of it too. */
  forget(projectId: string, id: string, uid?: string): void {
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
