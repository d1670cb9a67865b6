import type { Config } from '../config/config.js';
import type { DnsResolver } from '../dns/resolver.js';
import { verpAddress } from '../modules/receiving/bounces/verp.js';
import { TtlCache } from '../lib/ttl-cache.js';
import type { Store } from '../store/store.js';
import { findDomainByName, type Domain } from '../modules/deliverability/domains/domains.repo.js';
import { findProject } from '../modules/account/projects/projects.repo.js';
import { domainKeys } from '../modules/deliverability/domains/domain-keys.repo.js';
import { canSendLive } from '../modules/deliverability/domains/domain-state.js';
import type { Email, Recipient } from '../modules/sending/emails/email.js';
import { attachmentsOf } from '../modules/sending/emails/email-attachments.repo.js';
import type { RecipientOutcome } from '../modules/sending/emails/lifecycle.js';
import type { QueueRow } from '../modules/sending/emails/queue.repo.js';
import { trackedHtml, type TrackingDeps } from '../modules/sending/tracking/tracking.service.js';
import { unsubscribeHeaders, wantsAutoUnsubscribe } from '../modules/sending/emails/list-unsubscribe.js';
import { signUnsubscribeToken } from '../modules/receiving/unsubscribe/unsubscribe-token.js';
import { DestinationFinder } from './destinations.js';
import type { MessageSigner } from './signing-pool.js';
import { SignedCache } from './signed-cache.js';
import type { Destination } from './smtp-pool.js';
import { providerQueueId, type SendResult, type SmtpSender } from './smtp-sender.js';
import type { AttemptHooks, AttemptResult } from './attempt.js';
import { AttemptLane, heldRecipients } from './attempt-lane.js';
import { classify, failAll, markOnce } from './attempt-outcomes.js';
import type { Shaper } from './shaping/shaper.js';

export interface LiveAttemptOptions {
  store: Store;
  resolver: DnsResolver;
  sender: SmtpSender;
  outbound: Pick<Config['outbound'], 'mode' | 'relay' | 'mxPort' | 'hostname'>;
  tracking: TrackingDeps;
  /** MIME building and DKIM signing (signing-pool.ts) */
  signer: MessageSigner;
  /** traffic shaping toward providers (direct mode) */
  shaper?: Shaper;
}

/** The From domain live mail leaves from, and its active DKIM key. */
interface Signer {
  domain: Domain;
  key: { id: string; pem: string };
}

// A burst from one domain reads its row a few times a second, not once per message; a DELETE
// or a lost record stops its sends within this time (and between the recipients of one attempt).
const DOMAIN_FRESH_MS = 250;
const notVerified: RecipientOutcome = { kind: 'failed', reason: 'domain_not_verified' };

/** The envelope sender (modules/receiving/bounces/verp.ts): at the domain's return path once its MX is found, else at outbound.hostname. */
export function envelopeSender(email: Email, recipient: Recipient | null, domain: Domain, hostname: string): string {
  const host = domain.checks['return_path:mx']?.dns === 'found' ? `${domain.returnPath}.${domain.name}` : hostname;
  return verpAddress(email.id, recipient?.id ?? null, host);
}

/**
 * The SMTP path of the MTA, one attempt at one queue row, in named steps:
 * the From domain and its key → where the row goes → (per SMTP transaction)
 * build and sign the message → send → classify each answer. The worker
 * records what comes back.
 */
export class LiveAttempt {
  private readonly keys = new Map<string, { id: string; pem: string }>();
  private readonly signed = new SignedCache();
  private readonly domains = new TtlCache<Domain | null>(DOMAIN_FRESH_MS);
  // a project's pool (posthorn project set --ip-pool) applies within a second
  private readonly pools = new TtlCache<string | null>(1000);
  private readonly destinations: DestinationFinder;

  constructor(private readonly o: LiveAttemptOptions) {
    this.destinations = new DestinationFinder(o.outbound, o.resolver);
  }

  readonly attempt = async (
    email: Email,
    row: QueueRow,
    recipients: Recipient[],
    hooks: AttemptHooks,
  ): Promise<AttemptResult> => {
    const found = await this.signerOf(email);
    if (!found) return failAll(recipients, notVerified, 'domain_not_verified');
    if (!found.key) return failAll(recipients, { kind: 'failed', reason: 'the domain has no DKIM key' });
    const signer: Signer = { domain: found.domain, key: found.key };
    // RFC 8460 §5.3: a TLS report goes out despite the recipient domain's own TLS policy
    const dest = await this.destinations.of(row.route, signer.domain.tls, email.reportType === 'tlsrpt');
    if (!Array.isArray(dest)) return failAll(recipients, dest);
    const beforeData = markOnce(hooks.beforeData);
    // The relay takes every recipient in one transaction, unless each needs its own tracked copy.
    if (this.o.outbound.mode === 'relay' && !this.perRecipient(email, signer.domain))
      return this.sendTogether(email, signer, dest, recipients, beforeData);
    const lane = await this.laneOf(email, row, dest, recipients.length);
    if (lane && !(lane instanceof AttemptLane)) {
      const outcomes = new Map<string, RecipientOutcome>();
      return {
        outcomes,
        ...heldRecipients(
          lane,
          recipients.map((r) => r.id),
          outcomes,
        ),
      };
    }
    return this.sendEach(email, signer, { row, lane, dest: lane?.destinations ?? dest }, recipients, beforeData);
  };

  /** Direct mode's traffic shaping: the attempt's lane (provider and source IP), or why it waits. */
  private async laneOf(email: Email, row: QueueRow, dest: Destination[], n: number) {
    const shaper = this.o.shaper;
    if (!shaper) return null;
    const pool = shaper.hasSources
      ? await this.pools.get(
          email.projectId,
          async () => (await findProject(this.o.store.reader, email.projectId))?.ipPool ?? null,
        )
      : null;
    return AttemptLane.open(shaper, dest, row, pool, n);
  }

  /** Step 1: the From domain, if live mail may still leave from it (LIFECYCLE: deleted or unverified stops sends), and its active key. */
  private async signerOf(email: Email, fresh = false): Promise<{ domain: Domain; key: Signer['key'] | null } | null> {
    const domain = await this.domains.get(
      email.fromDomain,
      () => findDomainByName(this.o.store.reader, email.fromDomain),
      fresh,
    );
    if (!domain || domain.projectId !== email.projectId || !canSendLive(domain.status)) return null;
    return { domain, key: await this.activeKey(domain) };
  }

  private async activeKey(domain: Domain): Promise<Signer['key'] | null> {
    // A selector holds another key after a rotation has come round to it again: the id names the key, not the selector.
    const id = `${domain.id}:${domain.activeSelector}:${domain.dkimActivatedAt}`;
    let key = this.keys.get(id);
    if (!key) {
      const pem = (await domainKeys(this.o.store.reader, domain.id)).find(
        (k) => k.selector === domain.activeSelector,
      )?.privateKeyPem;
      if (!pem) return null;
      key = { id, pem };
      this.keys.set(id, key);
    }
    return key;
  }

  /** Relay mode: one transaction for every recipient, envelope sender naming the email only. */
  private async sendTogether(
    email: Email,
    s: Signer,
    dest: Destination[],
    recipients: Recipient[],
    beforeData: () => Promise<void>,
  ): Promise<AttemptResult> {
    const raw = await this.message(email, s, recipients[0]);
    const res = await this.o.sender.send(dest, {
      envelope: {
        from: envelopeSender(email, null, s.domain, this.o.outbound.hostname),
        to: recipients.map((r) => r.address),
      },
      raw,
      beforeData,
    });
    const byAddress = new Map(res.recipients.map((x) => [x.address, x]));
    const outcomes = new Map(recipients.map((r) => [r.id, classify(byAddress.get(r.address), res)] as const));
    return {
      outcomes,
      providerMessageId: res.recipients.some((x) => x.kind === 'delivered') ? this.providerId(email, res) : null,
    };
  }

  /**
   * Direct mode: one transaction per recipient, since each has its own VERP sender, each let go
   * by the lane of the route's provider (traffic shaping) or held back with the rest after it.
   */
  private async sendEach(
    email: Email,
    s: Signer,
    { row, lane, dest }: { row: QueueRow; lane: AttemptLane | null; dest: Destination[] },
    recipients: Recipient[],
    beforeData: () => Promise<void>,
  ): Promise<AttemptResult> {
    const outcomes = new Map<string, RecipientOutcome>();
    let providerMessageId: string | null = null;
    for (const [i, r] of recipients.entries()) {
      // a DELETE or a lost record during a long attempt stops the recipients not yet sent
      const still = i > 0 ? await this.signerOf(email, true) : s;
      if (!still) {
        for (const rest of recipients.slice(i)) outcomes.set(rest.id, notVerified);
        return { outcomes, providerMessageId, failureReason: 'domain_not_verified' };
      }
      // signing may have moved to a new key meanwhile (a rotation): its selector and its key go together
      if (!still.key) {
        for (const rest of recipients.slice(i))
          outcomes.set(rest.id, { kind: 'failed', reason: 'the domain has no DKIM key' });
        return { outcomes, providerMessageId };
      }
      const gate = lane ? await lane.admit(`${row.id}:${r.id}`) : null;
      if (gate?.kind === 'hold') {
        const ids = recipients.slice(i).map((x) => x.id);
        return { outcomes, providerMessageId, ...heldRecipients(gate, ids, outcomes) };
      }
      const domain = still.domain;
      const raw = await this.message(email, { domain, key: still.key }, r);
      const res = await this.o.sender.send(dest, {
        envelope: { from: envelopeSender(email, r, domain, this.o.outbound.hostname), to: [r.address] },
        raw,
        beforeData,
        ...(lane ? { mayStart: lane.mayStart(gate?.probe === true) } : {}),
      });
      if (lane && res.withdrawn) {
        const hold = await lane.withdrawn(`${row.id}:${r.id}`);
        const ids = recipients.slice(i).map((x) => x.id);
        return { outcomes, providerMessageId, ...heldRecipients(hold, ids, outcomes) };
      }
      const got = res.recipients[0];
      outcomes.set(r.id, lane ? lane.outcome(res, classify(got, res), gate?.probe === true) : classify(got, res));
      if (got?.kind === 'delivered' && !providerMessageId) providerMessageId = this.providerId(email, res);
    }
    return { outcomes, providerMessageId };
  }

  private tracked(email: Email, domain: Domain): boolean {
    return email.html !== null && this.o.tracking.publicUrl !== null && (domain.openTracking || domain.clickTracking);
  }

  /** Each recipient gets a copy of their own: tracked links, or unsubscribe links that name them. */
  private perRecipient(email: Email, domain: Domain): boolean {
    return this.tracked(email, domain) || wantsAutoUnsubscribe(email.headers);
  }

  /** Steps build and sign: once per email (with tracking or one-click unsubscribe, once per recipient). */
  private message(email: Email, s: Signer, recipient: Recipient): Promise<Buffer> {
    return this.signed.get(this.perRecipient(email, s.domain) ? `${email.id}:${recipient.id}` : email.id, () =>
      this.build(email, s, recipient),
    );
  }

  /** The recipient's List-Unsubscribe links: HTTPS (one-click) when http.public_url is set, and the unsubscribe mailbox at the return path. */
  private async unsubscribeLinks(email: Email, domain: Domain, recipient: Recipient) {
    const token = signUnsubscribeToken(await this.o.tracking.key(), recipient.id);
    const host = envelopeSender(email, recipient, domain, this.o.outbound.hostname).split('@')[1];
    // RFC 8058 §3.1: one-click needs an HTTPS link; a plain-HTTP public_url (the localhost default) gives only the mailto
    const https = this.o.tracking.publicUrl?.startsWith('https://') ? this.o.tracking.publicUrl : null;
    return { url: https ? `${https}/u/${token}` : null, mailto: `unsubscribe+${token}@${host}` };
  }

  private async build(email: Email, { domain, key }: Signer, recipient: Recipient): Promise<Buffer> {
    const tracked = this.tracked(email, domain);
    const html = tracked
      ? await trackedHtml(
          this.o.tracking,
          email.html!,
          { emailId: email.id, recipientId: recipient.id },
          { opens: domain.openTracking, clicks: domain.clickTracking },
        )
      : email.html;
    const headers = wantsAutoUnsubscribe(email.headers)
      ? unsubscribeHeaders(email.headers, await this.unsubscribeLinks(email, domain, recipient))
      : email.headers;
    // an email handed over by the accept or claimed by the worker says whether it has any: most have none
    const attachments = email.attachmentCount === 0 ? [] : await attachmentsOf(this.o.store.reader, email.id);
    return this.o.signer.sign({
      mime: {
        from: email.from,
        to: email.to,
        cc: email.cc,
        replyTo: email.replyTo,
        subject: email.subject,
        html,
        text: email.text,
        headers,
        attachments: attachments.map((a) => ({
          filename: a.filename,
          content: a.content,
          contentType: a.contentType,
          ...(a.contentId ? { contentId: a.contentId } : {}),
        })),
        messageId: email.messageId,
        date: email.createdAt,
        reportType: email.reportType ?? null,
      },
      dkim: { domainName: domain.name, selector: domain.activeSelector, keyId: key.id, privateKeyPem: key.pem },
    });
  }

  /** The relay's queue id from its 250 reply (the Message-ID when it names none); the Message-ID in direct mode. */
  private providerId(email: Email, res: SendResult): string {
    return this.o.outbound.mode === 'relay'
      ? (providerQueueId(res.response ?? '') ?? email.messageId)
      : email.messageId;
  }
}
