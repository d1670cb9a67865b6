import { html, type Html } from './html.js';
import { time } from './layout.js';
import type {
  DeliveryHold,
  DeliveryState,
  DeliveryWait,
  SourceIpStatus,
} from '../../modules/deliverability/shaping/mta-status.service.js';

// The emails page's banner when the MTA holds this project's mail back for a reason of its own
// (docs/delivery.md): a provider that throttled the sender, a warm-up cap of its source addresses,
// DNS lookups that fail, a TLS policy that leaves no MX host. Nothing held back is lost or bounced
// for it: it waits and goes out when the reason ends.

const plural = (n: number, one: string): string => `${n} ${one}${n === 1 ? '' : 's'}`;

const WAITS: Record<DeliveryWait['kind'], { what: string; then: string }> = {
  warmup: {
    what: 'Warm-up cap',
    then: "This server's sending addresses are warming up and have sent today's share to a provider; the rest goes out from the next UTC day.",
  },
  dns: {
    what: 'DNS lookups failing',
    then: "The recipients' mail servers could not be looked up; it is tried again on the retry schedule.",
  },
  tls: {
    what: 'Transport security',
    then: "The recipients' domain asks for secure delivery (MTA-STS or DANE) that none of its mail servers offers now; it is never sent in plain text.",
  },
};

export function deliveryBanner(d: DeliveryState): Html {
  const warming = d.sources.filter((s) => s.warmup && s.daily_cap !== null);
  if (!d.suspended.length && !d.waiting.length && !warming.length) return html``;
  const held = d.suspended.length + d.waiting.length > 0;
  return html`<div class="note" role="status">${
    held
      ? html`<p><strong>Some mail is held back.</strong> It waits and is sent when the reason below ends. Nothing is lost or bounced for it.</p>
<ul>${d.suspended.map(suspendedItem)}${d.waiting.map(waitItem)}</ul>`
      : ''
  }${warming.length ? warmupProgress(warming) : ''}</div>`;
}

function suspendedItem(h: DeliveryHold): Html {
  return html`<li><strong>${h.provider}</strong> asked this server to slow down${h.source_ip ? html` (from ${h.source_ip})` : ''}: ${plural(h.queued, 'message')} waiting, until ${time(h.until)}${h.reason ? html` — <q>${h.reason}</q>` : ''}</li>`;
}

function waitItem(w: DeliveryWait): Html {
  const k = WAITS[w.kind];
  return html`<li><strong>${k.what}</strong>: ${plural(w.queued, 'message')} waiting, next attempt ${time(w.next_attempt_at)} — <q>${w.reason}</q>. ${k.then}</li>`;
}

/** Each warming address of the project's pools: its day, today's cap per large provider, and what it sent today. */
function warmupProgress(ips: SourceIpStatus[]): Html {
  return html`<p><strong>Warming up.</strong> New sending addresses send a little more each day to each large mailbox provider, so that providers learn to trust them.</p>
<ul>${ips.map((ip) => {
    const sent = Object.entries(ip.sent_today);
    return html`<li><strong>${ip.address}</strong> (pool ${ip.pool}): ${ip.warmup_day === null ? 'not used yet' : html`day ${ip.warmup_day}`}, up to ${plural(ip.daily_cap ?? 0, 'message')} per provider today${sent.length ? html`; sent today: ${sent.map(([p, n]) => `${p} ${n}`).join(', ')}` : ''}</li>`;
  })}</ul>`;
}
