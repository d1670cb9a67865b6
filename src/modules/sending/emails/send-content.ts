import { validationError } from '../../../lib/errors.js';
import { guessContentType } from './attachments.js';
import type { StoredAttachment } from './email.js';
import type { TemplateService } from '../templates/templates.service.js';
import { checkAttachmentBytes, MAX_ATTACHMENT_BYTES, type PendingAttachment, type PreparedEmail } from './prepare.js';

// What a send carries besides its fields, fetched before the accept: a template's rendering and
// the attachments given by URL.

/** Downloads an attachment `path` through the SSRF guard; throws an ApiError naming the field on failure. */
export type AttachmentFetcher = (
  url: string,
  field: string,
  maxBytes: number,
) => Promise<{ content: Buffer; contentType: string | null }>;

interface ContentDeps {
  templates: Pick<TemplateService, 'renderForSend'>;
  fetchAttachment: AttachmentFetcher;
}

/** A template send gets its content here, test keys as live ones; the email records what it was rendered from. */
export async function render(
  deps: ContentDeps,
  projectId: string,
  prepared: PreparedEmail,
  t: NonNullable<PreparedEmail['template']>,
): Promise<void> {
  const { version, rendered } = await deps.templates.renderForSend(projectId, {
    templateId: t.id,
    version: t.version,
    variables: t.variables,
    language: t.language,
    firstRecipient: prepared.recipients[0].address,
  });
  prepared.subject = rendered.subject;
  prepared.html = rendered.html;
  prepared.text = rendered.text;
  prepared.templateId = t.id;
  prepared.templateVersion = version;
}

export async function resolveAttachments(deps: ContentDeps, list: PendingAttachment[]): Promise<StoredAttachment[]> {
  let total = list.reduce((n, a) => n + (a.content?.length ?? 0), 0);
  const out: StoredAttachment[] = [];
  for (const a of list) {
    let content = a.content;
    let contentType = a.contentType;
    if (!content) {
      const fetched = await deps.fetchAttachment(a.path!, `${a.field}.path`, MAX_ATTACHMENT_BYTES - total);
      checkAttachmentBytes(fetched.content, `${a.field}.path`);
      content = fetched.content;
      // the server's Content-Type is a hint only: one that is not a plain type/subtype is not kept
      if (fetched.contentType && fetched.contentType.length <= 100 && /^[\w.+-]+\/[\w.+-]+$/.test(fetched.contentType))
        contentType ??= fetched.contentType;
      total += content.length;
      if (total > MAX_ATTACHMENT_BYTES)
        throw validationError('attachments', 'must not exceed 10 MB in total (decoded)');
    }
    out.push({
      filename: a.filename!,
      contentType: contentType ?? guessContentType(a.filename!),
      contentId: a.contentId,
      content,
    });
  }
  return out;
}
