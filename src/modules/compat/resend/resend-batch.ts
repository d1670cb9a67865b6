import { ApiError } from '../../../lib/errors.js';
import type { Principal } from '../../account/keys/principal.js';
import { itemError, ofItem } from '../../sending/emails/batch-items.js';
import type { SendEmailBody } from '../../sending/emails/emails.schema.js';
import type { EmailService } from '../../sending/emails/emails.service.js';
import { prepareEmail } from '../../sending/emails/prepare.js';
import { fromResendEmail, type ResendEmailBody } from './resend-email-body.js';

// Resend's batch send over POST /v1/emails/batch's service: strict (the default) refuses the whole
// batch for one bad email; `x-batch-validation: permissive` queues the valid emails and lists the
// others with their index. What the accept refuses (every recipient suppressed, a limit) refuses
// the emails sent together in either mode (docs/resend.md).

export interface BatchAnswer {
  data: Array<{ id: string }>;
  errors?: Array<{ index: number; message: string }>;
}

export async function sendResendBatch(
  emails: Pick<EmailService, 'sendBatch'>,
  principal: Principal,
  items: ResendEmailBody[],
  o: { requestId: string; idempotencyKey: string | undefined; permissive: boolean },
): Promise<BatchAnswer> {
  const now = Date.now();
  const valid: Array<{ index: number; body: SendEmailBody }> = [];
  const errors: Array<{ index: number; message: string }> = [];
  items.forEach((item, index) => {
    try {
      const body = ofItem(index, () => fromResendEmail(item, now));
      // what POST /v1/emails would refuse of it, before any is sent
      ofItem(index, () => prepareEmail(body, now));
      if (body.attachments?.length)
        throw itemError(
          index,
          new ApiError(400, 'validation_error', 'attachments: are not taken in a batch', 'attachments'),
        );
      valid.push({ index, body });
    } catch (e) {
      if (!o.permissive || !(e instanceof ApiError)) throw e;
      errors.push({ index, message: e.message });
    }
  });
  if (!valid.length) return { data: [], errors };
  const sent = await emails.sendBatch(
    principal,
    valid.map((v) => v.body),
    o.requestId,
    o.idempotencyKey,
  );
  const ids = sent.replay
    ? (sent.replay.body as { data: Array<{ id: string }> }).data.map((e) => e.id)
    : (sent.batch ?? [sent.email]).map((e) => e.id);
  return { data: ids.map((id) => ({ id })), ...(o.permissive ? { errors } : {}) };
}
