import { classifyBounce } from './classify-bounce.js';
import type { BounceReason, BounceType } from './reasons.js';
import { commandIn, type SmtpCommand } from './smtp-text.js';

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
 * Diagnostic-Code; delivered and relayed ones carry no verdict. `notice` is the report's own
 * human-readable text, which often says the command the server refused ("in reply to end of DATA
 * command") where the Diagnostic-Code does not.
 */
export function readDeliveryStatus(text: string, notice = ''): DeliveryStatus {
  const said = mentions(notice.slice(0, 256 * 1024).toLowerCase());
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
    // a local program's exit code ("X-Unix; 255") keeps its type: the number alone says nothing
    const rawDiagnostic = g.get('diagnostic-code');
    const diagnostic = rawDiagnostic
      ? /^\s*x-unix\s*;/i.test(rawDiagnostic)
        ? rawDiagnostic.trim()
        : typed(rawDiagnostic)
      : null;
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
    const b = classifyBounce({
      status,
      diagnostic,
      final: action === 'failed',
      delayed: action === 'delayed' || expired,
      command: said(address),
    });
    recipients.push({
      address,
      action,
      status: b.status,
      bounceType: b.bounceType,
      reason: b.reason,
      diagnostic: b.diagnostic || null,
    });
  }
  return { reportingMta, recipients };
}

/** The command the (lower-cased) notice says the server refused for a recipient: from its first mention on. */
function mentions(notice: string): (address: string) => SmtpCommand | null {
  // where each address is first named, found in one pass: a report about thousands of recipients
  // must not search its notice once per recipient
  const first = new Map<string, number>();
  for (const m of notice.matchAll(/[^\s<>"();:,@]{1,64}@[^\s<>"();:,@]{1,255}/g))
    if (!first.has(m[0])) first.set(m[0], m.index);
  return (address) => {
    if (!notice) return null;
    const at = first.get(address) ?? 0;
    return commandIn(notice.slice(at, at + 2000));
  };
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
  const bare = typed(value.slice(0, 2000)).replace(/^<|>$/g, '').trim();
  // no "@" inside either part, bounded labels: a hostile run of "@" or "." cannot make it backtrack
  const m = /[^\s<>"();:,@]{1,64}@(?:[^\s<>"();:,@.]{1,63}\.){1,10}[^\s<>"();:,@.]{1,63}/.exec(bare);
  return m ? m[0].replace(/\.$/, '').toLowerCase() : null;
}
