import { submittedEmail, type Submitted } from './modules/sending/emails/submitted.js';
import { readAttachment, readInbound, unreadable } from './modules/receiving/inbound/read-inbound.js';
import { compileVersion } from './modules/sending/templates/versions.js';
import type { CompiledVersion, VersionContent } from './modules/sending/templates/template.js';
import { compileInline } from './modules/audience/broadcasts/broadcast-content.js';
import type { BroadcastContent } from './modules/audience/broadcasts/broadcast.js';
import { renderVersion, type RenderedContent } from './modules/sending/templates/render-version.js';
import type { TemplateVersion } from './modules/sending/templates/template.js';

// What the parsing pool's threads do (src/work-thread.ts runs this table;
// core.ts hands the pool's run() to the services as their parse functions).
// Each task takes and returns structured-clonable values only.

export const WORK_TASKS = {
  /** a message the MX listener took: bounce, complaint, received mail, DMARC reports */
  inbound: readInbound,
  /** one attachment of a stored received message, read again for its download */
  attachment: readAttachment,
  /** a message submitted over SMTP, as the send request it makes */
  submitted: async ({
    raw,
    envelope,
  }: {
    raw: Uint8Array;
    envelope: { from: string; to: string[] };
  }): Promise<Submitted> => {
    try {
      return await submittedEmail(Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength), envelope);
    } catch (e) {
      throw unreadable(e);
    }
  },
  /** a template version published: parsed, checked, its text part made from its HTML */
  compileTemplate: (content: VersionContent): CompiledVersion => compileVersion(content),
  /** a broadcast's inline content checked as a version would be */
  checkBroadcast: (content: BroadcastContent): void => void compileInline(content),
  /** a rendering too large to finish within this thread's step allowance for the calling thread */
  render: ({
    version,
    variables,
    language,
  }: {
    version: TemplateVersion;
    variables: Record<string, unknown>;
    language: string | null;
  }): RenderedContent => renderVersion(version, variables, language),
};

export type WorkTasks = typeof WORK_TASKS;
