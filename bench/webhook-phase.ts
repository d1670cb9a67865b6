// The webhook phases of `npm run bench`: events delivered per second to one HTTPS endpoint, then to
// ten at once, one of which answers every request after 2 s. Events come from test-key sends (the
// simulator's email.sent and email.delivered, two per email), so the MTA does no work meanwhile.
import { Pool } from 'undici';
import type { HttpsReceiver } from '../test/helpers/https-receiver.js';

type Api = (key: string, method: string, path: string, body?: unknown) => Promise<any>;

export interface WebhookPhaseDeps {
  base: string;
  key: string;
  api: Api;
  hooks: HttpsReceiver;
  step: (what: string) => void;
}

/** How long the slow endpoint takes to answer each request. */
const SLOW_MS = 2000;

/** n test-key emails from 16 clients, client i sending to the node bases[i % bases.length]: 2n events. */
export async function sendEmails(bases: string | string[], key: string, n: number, tag: string): Promise<void> {
  const nodes = typeof bases === 'string' ? [bases] : bases;
  const pools = nodes.map((b) => new Pool(b, { connections: Math.ceil(16 / nodes.length) }));
  await Promise.all(
    Array.from({ length: 16 }, async (_, w) => {
      const pool = pools[w % pools.length];
      for (let i = w; i < n; i += 16) {
        const res = await pool.request({
          path: '/v1/emails',
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({
            from: 'a@shop.bench.test',
            to: [`${tag}${i}@simulator.posthorn.test`],
            subject: 'x',
            text: 'y',
          }),
        });
        if (res.statusCode !== 202) throw new Error(`POST /v1/emails: ${res.statusCode} ${await res.body.text()}`);
        await res.body.dump();
      }
    }),
  );
  await Promise.all(pools.map((p) => p.close()));
}

/** Resolves when `count()` reaches `n`; fails after 60 s without progress. */
export async function reach(count: () => number, n: number, what: string): Promise<void> {
  let last = count();
  let quietSince = Date.now();
  while (count() < n) {
    await new Promise((r) => setTimeout(r, 20));
    const now = count();
    if (now !== last) [last, quietSince] = [now, Date.now()];
    else if (Date.now() - quietSince > 60_000)
      throw new Error(`${what}: ${now} of ${n} after a minute without progress`);
  }
}

/**
 * Requests answered 2xx per path (each endpoint has a path of its own), counted as they come:
 * the bench shares the cores with the appliance, so it does not rescan every request it holds.
 */
function answeredCounter(hooks: HttpsReceiver): (path: string) => number {
  const counts = new Map<string, number>();
  const pending: typeof hooks.requests = [];
  let seen = 0;
  const tally = (r: (typeof hooks.requests)[number]) => counts.set(r.path, (counts.get(r.path) ?? 0) + 1);
  return (path) => {
    // a slow answer is counted once its status is in
    for (let i = pending.length - 1; i >= 0; i--) {
      const r = pending[i];
      if (r.status === null) continue;
      pending.splice(i, 1);
      if (r.status < 300) tally(r);
    }
    for (; seen < hooks.requests.length; seen++) {
      const r = hooks.requests[seen];
      if (r.status === null) pending.push(r);
      else if (r.status < 300) tally(r);
    }
    return counts.get(path) ?? 0;
  };
}

export async function webhookPhases(
  d: WebhookPhaseDeps,
): Promise<{ n: number; one_endpoint: { events: number; per_s: number }; ten_endpoints: Record<string, number> }> {
  const { api, key, hooks } = d;
  const received = answeredCounter(hooks);

  d.step('webhook events, one endpoint');
  const one = await api(key, 'POST', '/v1/webhooks', {
    url: hooks.url('/ok/bench'),
    events: ['email.sent', 'email.delivered'],
  });
  if (!one.id) throw new Error(`no webhook endpoint: ${JSON.stringify(one)}`);
  const emails = 2000;
  const t1 = performance.now();
  await sendEmails(d.base, key, emails, 'hook');
  await reach(() => received('/ok/bench'), 2 * emails, 'one endpoint');
  const onePerS = (2 * emails) / ((performance.now() - t1) / 1000);
  await api(key, 'DELETE', `/v1/webhooks/${one.id}`);

  // Ten endpoints on one host (one origin: the appliance caps requests per endpoint, not connections
  // per origin, so the slow one's open requests take no connection from the others); the last answers in 2 s.
  d.step(`webhook events, ten endpoints, one answering in ${SLOW_MS / 1000} s`);
  const paths = Array.from({ length: 10 }, (_, i) => (i === 9 ? `/delay/${SLOW_MS}/slow` : `/ok/fast${i}`));
  const ids: string[] = [];
  for (const path of paths) {
    const ep = await api(key, 'POST', '/v1/webhooks', {
      url: hooks.url(path),
      events: ['email.sent', 'email.delivered'],
    });
    if (!ep.id) throw new Error(`no webhook endpoint: ${JSON.stringify(ep)}`);
    ids.push(ep.id);
  }
  const tenEmails = 1000;
  const fastPaths = paths.slice(0, 9);
  const fastReceived = () => fastPaths.reduce((n, p) => n + received(p), 0);
  const slowAnswered = () => received(paths[9]);
  const slowAsked = () => hooks.to(paths[9]).length;
  const t2 = performance.now();
  await sendEmails(d.base, key, tenEmails, 'ten');
  // the fast endpoints' events must all arrive while the slow one is still working through its own
  await reach(fastReceived, 9 * 2 * tenEmails, 'nine fast endpoints').catch((e: Error) => {
    const last = hooks.requests.slice(-3).map((r) => `${r.path} ${r.status}`);
    throw new Error(`${e.message}; ${hooks.requests.length} requests, the last: ${last.join(', ')}`);
  });
  const secs = (performance.now() - t2) / 1000;
  const [fast, slow, asked] = [fastReceived(), slowAnswered(), slowAsked()];
  // The slow endpoint's deliveries still pending are dropped with it: later phases run without them.
  for (const id of ids) await api(key, 'DELETE', `/v1/webhooks/${id}`);
  return {
    // the events delivered in both parts, which the appliance's CPU per event is divided by
    n: 2 * emails + fast + slow,
    one_endpoint: { events: 2 * emails, per_s: onePerS },
    ten_endpoints: {
      events_per_s_all: (fast + slow) / secs,
      events_per_s_nine_fast: fast / secs,
      fast_vs_one_endpoint: fast / secs / onePerS,
      slow_endpoint_answered: slow,
      slow_endpoint_requests_started: asked,
      seconds: secs,
    },
  };
}
