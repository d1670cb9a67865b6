import { newId } from '../../../lib/ids.js';
import { notFound } from '../../../lib/errors.js';
import type { Clock } from '../../../lib/time.js';
import type { Logger } from '../../../log/logger.js';
import type { GroupCommit } from '../../../store/group-commit.js';
import type { Store } from '../../../store/store.js';
import type { Report } from '../bounces/report.js';
import { emailOfMessageId, readVerp } from '../bounces/verp.js';
import { findDomainByName, findDomainByToken, type Domain } from '../../deliverability/domains/domains.repo.js';
import { storeMailedReports } from '../dmarc/dmarc.service.js';
import { recordUnsubscribe } from '../unsubscribe/unsubscribe.service.js';
import { verifyUnsubscribeToken } from '../unsubscribe/unsubscribe-token.js';
import { TtlCache } from '../../../lib/ttl-cache.js';
import { insertEvents, type OutboxEvent } from '../../notifying/events/events.repo.js';
import { applyReports } from './apply-reports.js';
import { findInbound, insertInbound, listInbound, rawOf, type InboundEmail } from './inbound.repo.js';
import { readableHere, readAttachment, readInbound, type ReadAttachment, type ReadInbound } from './read-inbound.js';
import type { Page } from '../../../lib/page.js';

export interface InboundDeps {
  store: Store;
  /** the thread's group commit: reports arriving together share one transaction and one fsync */
  writer: GroupCommit;
  clock: Clock;
  logger: Logger;
  /** outbound.hostname: VERP and report addresses live there, and it is the Message-ID domain */
  hostname: string;
  /** the key unsubscribe tokens are signed with (unsubscribe/unsubscribe-token.ts); without it unsubscribe+ addresses are refused */
  unsubscribeKey?: () => Promise<Buffer>;
  /** reads a message, and an attachment of a stored one: on the parsing pool in serve (docs/security.md), else on this thread */
  read?: ReadInbound;
  readAttachment?: ReadAttachment;
}

/** Who an envelope recipient of the MX listener is, or null: refused at RCPT (never an open relay). */
export type Target =
  | { kind: 'report'; address: string; emailId: string | null; recipientId: string | null }
  | { kind: 'receive'; address: string; projectId: string }
  | { kind: 'dmarc'; address: string; domainId: string; projectId: string; domain: string }
  | { kind: 'unsubscribe'; address: string; recipientId: string };

/** Local parts at outbound.hostname that take reports (RFC 5321 §4.5.1 postmaster; feedback loops are registered to abuse@ or fbl@). */
const REPORT_BOXES = new Set(['postmaster', 'abuse', 'fbl', 'feedback', 'arf']);

export interface Delivered {
  /** what the message was read as, for the log */
  kind: Report['kind'] | 'received' | 'dmarc_report';
  applied: number;
  received: string[];
  /** DMARC aggregate reports stored (a report received before is not stored again) */
  dmarcReports?: { stored: number; duplicate: number; refused: string[] };
}

/** A domain by name, as RCPT sees it (cached: inboundService). */
type DomainLookup = (name: string) => Promise<Domain | null>;

async function findTarget(deps: InboundDeps, domain: DomainLookup, address: string): Promise<Target | null> {
  const at = address.lastIndexOf('@');
  if (at <= 0) return null;
  const local = address.slice(0, at).toLowerCase();
  const host = address.slice(at + 1).toLowerCase();
  // at a host that is not the appliance's own, these local parts are a verified domain's receiving addresses like any other
  const unsub = /^unsubscribe\+(.+)$/.exec(local);
  const special = unsub ? await unsubscribeTarget(deps, domain, address, host, unsub[1]) : null;
  if (special) return special;
  const dmarc = /^dmarc\+([0-9a-f]{20})$/.exec(local);
  const reports = dmarc ? await dmarcTarget(deps, address, host, dmarc[1]) : null;
  if (reports) return reports;
  const verp = readVerp(address);
  if (verp)
    return (await returnPathHost(deps, domain, host))
      ? { kind: 'report', address, emailId: verp.emailId, recipientId: verp.recipientId }
      : null;
  if (host === deps.hostname.toLowerCase() && REPORT_BOXES.has(local))
    return { kind: 'report', address, emailId: null, recipientId: null };
  const found = await domain(host);
  return found && found.status === 'verified' ? { kind: 'receive', address, projectId: found.projectId } : null;
}

/** unsubscribe+<token>@ a return-path host or outbound.hostname: the mailto of List-Unsubscribe (docs/unsubscribe.md). */
async function unsubscribeTarget(
  deps: InboundDeps,
  domain: DomainLookup,
  address: string,
  host: string,
  token: string,
): Promise<Target | null> {
  const recipientId = deps.unsubscribeKey ? verifyUnsubscribeToken(await deps.unsubscribeKey(), token) : null;
  if (!recipientId || !(await returnPathHost(deps, domain, host))) return null;
  return { kind: 'unsubscribe', address, recipientId };
}

/** dmarc+<token>@ the domain's return-path subdomain (the address its DMARC record gives) or outbound.hostname. */
async function dmarcTarget(deps: InboundDeps, address: string, host: string, token: string): Promise<Target | null> {
  const d = await findDomainByToken(deps.store.reader, token);
  if (!d || (host !== `${d.returnPath}.${d.name}` && host !== deps.hostname.toLowerCase())) return null;
  return { kind: 'dmarc', address, domainId: d.id, projectId: d.projectId, domain: d.name };
}

/** A VERP address is ours at outbound.hostname, or at the email's From domain's return-path subdomain. */
async function returnPathHost(deps: InboundDeps, domain: DomainLookup, host: string): Promise<boolean> {
  if (host === deps.hostname.toLowerCase()) return true;
  const found = await domain(host.slice(host.indexOf('.') + 1));
  return !!found && host === `${found.returnPath}.${found.name}`;
}

/** One accepted message: read, applied and stored durably (the group commit resolves once its commit is on disk). */
async function deliver(deps: InboundDeps, mailFrom: string, targets: Target[], raw: Buffer): Promise<Delivered> {
  const reports = targets.filter((t): t is Extract<Target, { kind: 'report' }> => t.kind === 'report');
  const receivers = targets.filter((t): t is Extract<Target, { kind: 'receive' }> => t.kind === 'receive');
  const dmarc = targets.filter((t): t is Extract<Target, { kind: 'dmarc' }> => t.kind === 'dmarc');
  const needs = { report: reports.length > 0, received: receivers.length > 0, dmarc: dmarc.length > 0 };
  const read = !deps.read || readableHere(raw, needs) ? readInbound : deps.read;
  const { report, received, mailed } =
    needs.report || needs.received || needs.dmarc
      ? await read({ raw, needs })
      : { report: null, received: null, mailed: null };
  const now = deps.clock.now();
  const hostname = deps.hostname;
  return deps.writer.run(async (trx) => {
    let applied = 0;
    if (report && (report.kind === 'bounce' || report.kind === 'complaint')) {
      const verp = reports.find((t) => t.emailId);
      const emailId =
        verp?.emailId ?? (report.originalMessageId ? emailOfMessageId(report.originalMessageId, hostname) : null);
      if (emailId) applied = await applyReports(trx, { emailId, recipientId: verp?.recipientId ?? null, report, now });
    }
    const ids: string[] = [];
    if (received) {
      const events: OutboxEvent[] = [];
      for (const [projectId, rcpts] of groupBy(receivers)) {
        const m: InboundEmail = {
          id: newId('inbound', now),
          projectId,
          mailFrom,
          rcptTo: rcpts,
          ...received,
          size: raw.length,
          createdAt: now,
        };
        await insertInbound(trx, m, raw);
        events.push(receivedEvent(m, now));
        ids.push(m.id);
      }
      await insertEvents(trx, events);
    }
    const dmarcReports = mailed ? await storeMailedReports(trx, dmarc, mailed, now) : undefined;
    for (const u of targets)
      if (u.kind === 'unsubscribe' && (await recordUnsubscribe(trx, u.recipientId, now, 'mailto'))?.recorded) applied++;
    return {
      kind: received ? 'received' : dmarcReports ? 'dmarc_report' : (report?.kind ?? 'other'),
      applied,
      received: ids,
      ...(dmarcReports ? { dmarcReports } : {}),
    };
  });
}

async function rawMessage(deps: InboundDeps, projectId: string, id: string): Promise<Buffer> {
  const raw = await rawOf(deps.store.reader, projectId, id);
  if (!raw) throw notFound(`inbound email ${id}`);
  return raw;
}

async function attachment(
  deps: InboundDeps,
  projectId: string,
  id: string,
  index: number,
): Promise<{ content: Buffer; contentType: string; filename: string }> {
  const found = await (deps.readAttachment ?? readAttachment)({ raw: await rawMessage(deps, projectId, id), index });
  if (!found) throw notFound(`attachment ${index} of inbound email ${id}`);
  // a Buffer cloned across threads arrives as a Uint8Array
  return {
    ...found,
    content: Buffer.isBuffer(found.content)
      ? found.content
      : Buffer.from(found.content.buffer, found.content.byteOffset, found.content.byteLength),
  };
}

/**
 * The MX side: which envelope recipients it takes, and what happens to a
 * message that arrived for them, in one transaction committed before the
 * listener answers 250. Bounces and complaints change the state of the email
 * they are about (apply-reports.ts); mail for a project's verified domain is
 * kept whole and announced as email.received.
 */
export function inboundService(deps: InboundDeps) {
  /*
   * Domains by name as RCPT sees them, for 2 s: a sender's bounces arrive in
   * bursts for one return-path domain. Only a domain found is kept, so a
   * domain added is taken at once; one removed is taken for 2 s more.
   */
  const domains = new TtlCache<Domain | null>(
    2000,
    (d) => d !== null,
    () => deps.clock.now(),
    10_000,
  );
  const domain: DomainLookup = (name) => domains.get(name, () => findDomainByName(deps.store.reader, name));
  return {
    target: (address: string) => findTarget(deps, domain, address),
    deliver: (mailFrom: string, targets: Target[], raw: Buffer) => deliver(deps, mailFrom, targets, raw),
    list: (projectId: string, limit: number, before: string | undefined): Promise<Page<InboundEmail>> =>
      listInbound(deps.store.reader, projectId, limit, before),
    async get(projectId: string, id: string): Promise<InboundEmail> {
      const m = await findInbound(deps.store.reader, projectId, id);
      if (!m) throw notFound(`inbound email ${id}`);
      return m;
    },
    raw: (projectId: string, id: string) => rawMessage(deps, projectId, id),
    attachment: (projectId: string, id: string, index: number) => attachment(deps, projectId, id, index),
  };
}

export type InboundService = ReturnType<typeof inboundService>;

function groupBy(receivers: Array<{ projectId: string; address: string }>): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const r of receivers) out.set(r.projectId, [...(out.get(r.projectId) ?? []), r.address.toLowerCase()]);
  return out;
}

/** email.received (CONTRACT §5 data): who, what and which files; never the body. */
function receivedEvent(m: InboundEmail, now: number): OutboxEvent {
  return {
    id: newId('event', now),
    projectId: m.projectId,
    type: 'email.received',
    emailId: null,
    recipient: m.rcptTo[0] ?? null,
    simulated: false,
    data: {
      inbound_id: m.id,
      from: m.from,
      to: m.to,
      cc: m.cc,
      subject: m.subject,
      message_id: m.messageId,
      attachments: m.attachments.map((a) => ({ filename: a.filename, content_type: a.contentType, size: a.size })),
      environment: 'live',
    },
    createdAt: now,
  };
}
