import { iso } from '../../../lib/time.js';
import { presentEmail } from './emails.presenter.js';
import type { QueuedEmail } from './queue.service.js';

/** `posthorn queue show`: the email as the API shows it, with what only the operator sees. */
export function presentQueuedEmail({ email, rows, events }: QueuedEmail) {
  return {
    ...presentEmail(email),
    project_id: email.projectId,
    message_id: email.messageId,
    recipients: email.recipients.map((r) => ({
      address: r.address,
      kind: r.kind,
      status: r.status,
      details: r.details,
    })),
    queue: rows.map((q) => ({
      id: q.id,
      route: q.route || '(one transaction)',
      state: q.state,
      attempts: q.attempts,
      next_attempt_at: iso(q.nextAttemptAt),
      data_started: q.dataStarted,
    })),
    events: events.map((e) => ({ id: e.id, type: e.type, recipient: e.recipient, created_at: iso(e.createdAt) })),
  };
}
