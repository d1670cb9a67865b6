import type { Config } from '../config/load.js';
import type { Logger } from '../log/logger.js';
import type { Store } from '../store/store.js';
import type { DnsResolver } from '../dns/resolver.js';
import { domainKeys, findDomainByName, type Domain } from '../modules/domains/domains.repo.js';
import { canSendLive } from '../modules/domains/domain-state.js';
import { attachmentsOf, type Email, type Recipient } from '../modules/emails/emails.repo.js';
import type { RecipientOutcome } from '../modules/emails/lifecycle.js';
import type { Delivery } from '../modules/emails/deliveries.repo.js';
import type { MessageSigner } from './signing-pool.js';
import { resolveDestinations, type Destinations } from './mx.js';
import { providerQueueId, type Destination, type SmtpSender } from './smtp-sender.js';
import type { Attempt, AttemptResult } from './worker.js';
import { trackedHtml, type TrackingDeps } from '../modules/tracking/tracking.service.js';
import { TtlCache } from '../lib/ttl-cache.js';

export interface LiveAttemptOptions {
  store: Store;
  resolver: DnsResolver;
  sender: SmtpSender;
  outbound: Config['outbound'];
  tracking: TrackingDeps;
  logger: Logger;
  /** MIME building and DKIM signing (signing-pool.ts) */
  signer: MessageSigner;
}

interface SigningKey {
  id: string;
  pem: string;
}

const SIGNED_TTL_MS = 10_000;
const DOMAIN_FRESH_MS = 250;
const SIGNED_BUDGET_BYTES = 64 * 1024 * 1024;

/**
 * VERP (CONTRACT §5): bounce+<email>-<recipient>@<return path>, so a bounce
 * names what it is about without parsing guesswork. A transaction for
 * several recipients (relay mode) names the email only; the DSN's
 * Final-Recipient then says who bounced.
 */
export function envelopeSender(email: Email, recipient: Recipient | null, domain: Domain, hostname: string): string {
  const host = domain.checks['return_path:mx']?.dns === 'found' ? `${domain.returnPath}.${domain.name}` : hostname;
  return recipient ? `bounce+${email.id.slice(4)}-${recipient.id.slice(4)}@${host}` : `bounce+${email.id.slice(4)}@${host}`;
}

/**
 * The SMTP path of the MTA, as a table of contents: the From domain must
 * still be verified; build the MIME once; sign it with the domain's active
 * DKIM key; find where the recipients' domain takes mail (or the relay);
 * one transaction per recipient (each has its own VERP sender) over pooled
 * connections; map the answers to outcomes.
 */
export function createLiveAttempt(o: LiveAttemptOptions): Attempt {
  const keys = new Map<string, SigningKey>();
  const signed = new Map<string, Promise<Buffer>>();
  const sizes = new Map<string, number>();
  let signedBytes = 0;

  /** The active DKIM key of a domain (its PEM; the signer parses it once per key id). */
  async function signingKey(domain: Domain): Promise<SigningKey | null> {
    const id = `${domain.id}:${domain.activeSelector}`;
    let key = keys.get(id);
    if (!key) {
      const pem = (await domainKeys(o.store.reader, domain.id)).find((k) => k.selector === domain.activeSelector)?.privateKeyPem;
      if (!pem) return null;
      key = { id, pem };
      keys.set(id, key);
    }
    return key;
  }

  const isTracked = (email: Email, domain: Domain) => email.html !== null && o.tracking.publicUrl !== null && (domain.openTracking || domain.clickTracking);

  /**
   * The signed message, built once per email (with tracking on, once per recipient, who gets
   * links of their own). The queue rows of one email's recipient domains go out close together,
   * so a signed copy is kept briefly, within a memory budget.
   */
  function message(email: Email, domain: Domain, key: SigningKey, recipient: Recipient): Promise<Buffer> {
    const tracked = isTracked(email, domain);
    const cacheKey = tracked ? `${email.id}:${recipient.id}` : email.id;
    const hit = signed.get(cacheKey);
    if (hit) return hit;
    const made = build(email, domain, key, recipient, tracked);
    signed.set(cacheKey, made);
    made.then(
      (raw) => {
        if (signed.get(cacheKey) !== made) return;
        sizes.set(cacheKey, raw.length);
        signedBytes += raw.length;
        setTimeout(() => forget(cacheKey), SIGNED_TTL_MS).unref();
        // oldest first, until the copies kept fit the budget again
        for (const k of sizes.keys()) {
          if (signedBytes <= SIGNED_BUDGET_BYTES) break;
          forget(k);
        }
      },
      () => signed.delete(cacheKey),
    );
    return made;
  }

  function forget(cacheKey: string): void {
    signed.delete(cacheKey);
    signedBytes -= sizes.get(cacheKey) ?? 0;
    sizes.delete(cacheKey);
  }

  async function build(email: Email, domain: Domain, key: SigningKey, recipient: Recipient, tracked: boolean): Promise<Buffer> {
    const html = tracked
      ? await trackedHtml(o.tracking, email.html!, { emailId: email.id, recipientId: recipient.id }, { opens: domain.openTracking, clicks: domain.clickTracking })
      : email.html;
    return o.signer.sign({
      mime: {
        from: email.from,
        to: email.to,
        cc: email.cc,
        replyTo: email.replyTo,
        subject: email.subject,
        html,
        text: email.text,
        headers: email.headers,
        // an email handed over by the accept or claimed by the worker says whether it has any: most have none
        attachments: (email.attachmentCount === 0 ? [] : await attachmentsOf(o.store.reader, email.id)).map((a) => ({ filename: a.filename, content: a.content, contentType: a.contentType, ...(a.contentId ? { contentId: a.contentId } : {}) })),
        messageId: email.messageId,
        date: email.createdAt,
      },
      dkim: { domainName: domain.name, selector: domain.activeSelector, keyId: key.id, privateKeyPem: key.pem },
    });
  }

  // MX answers are kept a minute: a burst to one domain asks DNS once. Failures are not kept.
  const mxCache = new TtlCache<Destinations>(60_000, (v) => v.kind !== 'dns_error');
  const destinationsOf = (domain: string) => mxCache.get(domain, () => resolveDestinations(domain, o.resolver));

  async function destinations(d: Delivery, domain: Domain): Promise<Destination[] | RecipientOutcome> {
    const out = o.outbound;
    if (out.mode === 'relay') {
      const r = out.relay!;
      // The relay gets credentials: its certificate is checked. A domain with tls: enforced
      // never leaves over plain text, the first hop included.
      return [{ host: r.host!, port: r.port, secure: r.secure, tls: domain.tls, verifyCertificate: true, ...(r.user ? { auth: { user: r.user, pass: r.pass ?? '' } } : {}) }];
    }
    const found = await destinationsOf(d.route);
    switch (found.kind) {
      case 'hosts':
        return found.hosts.flatMap((h) => h.addresses.map((address) => ({ host: address, servername: h.name, port: out.mxPort, tls: domain.tls })));
      case 'null_mx':
        return { kind: 'bounced', bounceType: 'Permanent', reply: `556 5.1.10 ${d.route} does not accept mail (null MX, RFC 7505)` };
      case 'no_domain':
        return { kind: 'bounced', bounceType: 'Permanent', reply: `550 5.1.2 ${d.route} does not exist (NXDOMAIN)` };
      case 'dns_error':
        return { kind: 'deferred', reply: `451 4.4.3 DNS lookup for ${d.route} failed: ${found.reason}` };
    }
  }

  // A burst from one domain reads its row a few times a second, not once per message; a DELETE
  // or a lost record stops its sends within DOMAIN_FRESH_MS (and between the recipients of one attempt).
  const domains = new TtlCache<Domain | null>(DOMAIN_FRESH_MS);

  /** The From domain, if live mail may still leave from it (LIFECYCLE: deleted or unverified stops sends). */
  async function sendingDomain(email: Email, fresh = false): Promise<Domain | null> {
    const domain = await domains.get(email.fromDomain, () => findDomainByName(o.store.reader, email.fromDomain), fresh);
    return domain && domain.projectId === email.projectId && canSendLive(domain.status) ? domain : null;
  }

  const notVerified: RecipientOutcome = { kind: 'failed', reason: 'domain_not_verified' };

  return async (email, d, recipients, hooks): Promise<AttemptResult> => {
    const all = (outcome: RecipientOutcome) => new Map(recipients.map((r) => [r.id, outcome]));
    let domain = await sendingDomain(email);
    if (!domain) return { outcomes: all(notVerified), failureReason: 'domain_not_verified' };
    const key = await signingKey(domain);
    if (!key) return { outcomes: all({ kind: 'failed', reason: 'the domain has no DKIM key' }) };
    const dest = await destinations(d, domain);
    if (!Array.isArray(dest)) return { outcomes: all(dest) };

    let dataMarked = false;
    const beforeData = async () => {
      if (!dataMarked) {
        await hooks.beforeData();
        dataMarked = true;
      }
    };
    const providerId = (response: string | undefined) => (o.outbound.mode === 'relay' ? (providerQueueId(response ?? '') ?? email.messageId) : email.messageId);

    // The relay takes every recipient in one transaction, unless each needs its own tracked copy.
    if (o.outbound.mode === 'relay' && !isTracked(email, domain)) {
      const res = await o.sender.send(dest, { envelope: { from: envelopeSender(email, null, domain, o.outbound.hostname), to: recipients.map((r) => r.address) }, raw: await message(email, domain, key, recipients[0]!), beforeData });
      const byAddress = new Map(res.recipients.map((x) => [x.address, x]));
      const outcomes = new Map(recipients.map((r) => {
        const got = byAddress.get(r.address);
        return [r.id, toOutcome(got?.kind ?? 'deferred', got?.reply ?? 'no answer', got?.bounceType, res.host)] as const;
      }));
      return { outcomes, providerMessageId: res.recipients.some((x) => x.kind === 'delivered') ? providerId(res.response) : null };
    }

    // Direct: one transaction per recipient, since each has its own VERP sender.
    const outcomes = new Map<string, RecipientOutcome>();
    let providerMessageId: string | null = null;
    for (const [i, r] of recipients.entries()) {
      // a DELETE or a lost record during a long attempt stops the recipients not yet sent
      if (i > 0 && !(domain = await sendingDomain(email, true))) {
        for (const rest of recipients.slice(i)) outcomes.set(rest.id, notVerified);
        return { outcomes, providerMessageId, failureReason: 'domain_not_verified' };
      }
      const res = await o.sender.send(dest, { envelope: { from: envelopeSender(email, r, domain, o.outbound.hostname), to: [r.address] }, raw: await message(email, domain, key, r), beforeData });
      const got = res.recipients[0];
      outcomes.set(r.id, toOutcome(got?.kind ?? 'deferred', got?.reply ?? 'no answer', got?.bounceType, res.host));
      if (got?.kind === 'delivered' && !providerMessageId) providerMessageId = providerId(res.response);
    }
    return { outcomes, providerMessageId };
  };
}

function toOutcome(kind: 'delivered' | 'deferred' | 'bounced' | 'ambiguous', reply: string, bounceType: 'Permanent' | 'Transient' | undefined, mx: string): RecipientOutcome {
  switch (kind) {
    case 'bounced':
      return { kind, bounceType: bounceType ?? 'Permanent', reply, mx };
    default:
      return { kind, reply, mx };
  }
}
