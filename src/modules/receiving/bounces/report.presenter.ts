import type { Report } from './report.js';

/** `posthorn inbound parse` (issue 21's shape): what the appliance reads from a message. */
export function presentReport(r: Report) {
  return {
    kind: r.kind,
    original_message_id: r.originalMessageId,
    ...(r.kind === 'complaint' ? { feedback_type: r.feedbackType, user_agent: r.userAgent } : {}),
    reporting_mta: r.reportingMta,
    recipients: r.recipients.map((x) => ({
      address: x.address,
      action: r.kind === 'complaint' ? null : x.action,
      status: x.status,
      bounce_type: x.bounceType,
      reason: x.reason,
      diagnostic: x.diagnostic,
    })),
  };
}
