import { classifyBounce, type BounceReason, type BounceType } from './classify-bounce.js';

/** What a report says about one recipient (the `posthorn inbound parse` shape, camel-cased). */
export interface ReportRecipient {
  address: string;
  action: 'failed' | 'delayed' | 'delivered' | 'relayed' | 'expanded';
  status: string | null;
  bounceType: BounceType | null;
  reason: BounceReason | null;
  diagnostic: string | null;
}

export interface DeliveryStatus {
  reportingMta: string | null;
  recipients: ReportRecipient[];
}

const ACTIONS = new Set(['failed', 'delayed', 'delivered', 'relayed', 'expanded']);

/**
 * A message/delivery-status body (RFC 3464 §2): the per-message fields, then
 * one blank-line-separated group per recipient. Each failed or delayed
 * recipient goes through the bounce classifier with its Status and
 * Diagnostic-Code; delivered and relayed ones carry no verdict.
 */
export function readDeliveryStatus(text: string): DeliveryStatus {
  const groups = text
    .replace(/\r\n/g, '\n')
    .split(/\n[ \t]*\n/)
    .map(fields)
    .filter((g) => g.size > 0);
  let reportingMta: string | null = null;
  const recipients: ReportRecipient[] = [];
  for (const g of groups) {
    if (g.has('reporting-mta') && !reportingMta) reportingMta = typed(g.get('reporting-mta')!);
    // a Final-Recipient that is no address (CommuniGate's "system;<>", Sun ONE's internal route
    // "@host:user@ims-ms-daemon") leaves the Original-Recipient as the one the report is about
    const address = addressOf(g.get('final-recipient') ?? '') ?? addressOf(g.get('original-recipient') ?? '');
    if (!address) continue;
    const rawAction = (g.get('action') ?? '').trim().toLowerCase().split(/[\s(]/)[0] ?? '';
    const status = /^[245]\.\d{1,3}\.\d{1,3}/.exec((g.get('status') ?? '').trim())?.[0] ?? null;
    const diagnostic = g.has('diagnostic-code') ? typed(g.get('diagnostic-code')!) : null;
    // "Action: expired" (SendGrid and others, not RFC 3464): the reporter gave up retrying
    const expired = rawAction === 'expired';
    const action = (
      ACTIONS.has(rawAction)
        ? rawAction
        : expired
          ? 'failed'
          : status?.startsWith('4')
            ? 'delayed'
            : status?.startsWith('2')
              ? 'delivered'
              : 'failed'
    ) as ReportRecipient['action'];
    if (action !== 'failed' && action !== 'delayed') {
      recipients.push({ address, action, status, bounceType: null, reason: null, diagnostic });
      continue;
    }
    const b = classifyBounce({ status, diagnostic, final: action === 'failed' });
    const reason = expired && (b.reason === 'system_error' || b.reason === 'other') ? 'expired' : b.reason;
    recipients.push({
      address,
      action,
      status: b.status,
      bounceType: reason === 'expired' ? 'Transient' : b.bounceType,
      reason,
      diagnostic: b.diagnostic || null,
    });
  }
  return { reportingMta, recipients };
}

function fields(block: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of block.replace(/\n[ \t]+/g, ' ').split('\n')) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    if (!out.has(name)) out.set(name, line.slice(colon + 1).trim());
  }
  return out;
}

/** "rfc822; user@example.com" → the value after the type (RFC 3464 address-type, diagnostic-type, mta-name-type). */
function typed(value: string): string {
  const m = /^\s*[A-Za-z0-9-]+\s*;\s*(.*)$/s.exec(value);
  return (m ? m[1] : value).trim();
}

/** The address of a recipient field, lower-cased, without brackets or a mail client's display part. */
export function addressOf(value: string): string | null {
  const bare = typed(value).replace(/^<|>$/g, '').trim();
  const m = /[^\s<>"();:,]+@[^\s<>"();:,]+\.[^\s<>"();:,]+/.exec(bare);
  return m ? m[0].replace(/\.$/, '').toLowerCase() : null;
}
