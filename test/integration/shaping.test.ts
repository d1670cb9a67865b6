import { expect } from 'chai';
import type { Tenant } from '../helpers/api.js';
import { mtaStatus } from '../../src/modules/deliverability/shaping/mta-status.service.js';
import { sendBroadcast } from '../helpers/audience.js';
import { DATABASE_KINDS } from '../helpers/databases.js';
import { dashboardPage, startLiveWorld, verifiedDomain, waitEmail, type LiveWorld } from '../helpers/live.js';
import { runCli, writeConfig } from '../helpers/process.js';
import { startSink, type SmtpSink } from '../helpers/smtp-sink.js';
import { waitFor } from '../helpers/wait.js';

// Traffic shaping toward mailbox providers (docs/delivery.md), as a user of the MTA sees it at the
// receiving end: a provider that throttles is left alone for the suspension (one probe after it),
// other providers keep their pace, nothing is bounced for it, everything arrives once, and
// `posthorn mta status` says what is going on. The throttling provider is a second sink on its own
// loopback address, reached through MX hosts under the provider's suffix.

const SUSPEND_S = 4;
const THROTTLE_REPLY = '4.7.28 [127.0.0.1] Our system has detected an unusual rate of unsolicited mail';

for (const kind of DATABASE_KINDS) {
  describe(`traffic shaping: a provider that throttles [${kind}]${kind === 'pg' ? ' @pg' : ''}`, function () {
    this.timeout(90_000);
    let w: LiveWorld;
    let t: Tenant;
    let from: string;
    let provider: SmtpSink;
    let throttling = true;
    /** every recipient the provider's sink answered, in order */
    const seen: Array<{ address: string; at: number; throttled: boolean }> = [];
    let config: string;

    before(async function () {
      w = await startLiveWorld(
        'dkim.shaping.test',
        'mta.shaping.test',
        {
          outbound: {
            providers: [
              {
                name: 'slowpost',
                mx_suffixes: ['.mx.slowpost.test'],
                max_connections: 2,
                max_messages_per_minute: 600,
              },
            ],
            backoff: [{ provider: 'slowpost', reply_pattern: '^421 4\\.7\\.28', suspend_for: `${SUSPEND_S}s` }],
          },
          broadcasts: { max_per_second: 1000 },
        },
        { jobs: true },
        kind,
      );
      let accepted = 0;
      provider = await startSink({
        host: '127.0.0.21',
        port: w.sink.port,
        rcpt: (address) => {
          const throttled = throttling && accepted >= 3;
          seen.push({ address, at: Date.now(), throttled });
          if (throttled) return { code: 421, message: THROTTLE_REPLY };
          accepted++;
          return null;
        },
      });
      for (let i = 0; i < 8; i++)
        w.world.add(`d${i}.slowpost-hosted.test`, 'MX', { exchange: `in${i % 2}.mx.slowpost.test`, priority: 10 });
      w.world.add('in0.mx.slowpost.test', 'A', '127.0.0.21');
      w.world.add('in1.mx.slowpost.test', 'A', '127.0.0.21');
      t = await w.api.tenant({ mode: 'live' });
      from = `shop@${(await verifiedDomain(t, w.world)).domain}`;
      const o = w.db.options;
      config = writeConfig(
        o.client === 'pg' ? { database: { client: 'pg', url: o.url } } : { data_dir: o.dataDir },
      ).path;
    });
    after(async function () {
      await provider?.stop();
      await w?.stop();
    });

    const send = async (to: string) => {
      const r = await t.api.post('/v1/emails', { from, to: [to], subject: 'Your receipt', text: 'Thanks' });
      expect(r.status, r.text).to.equal(202);
      return r.body.id as string;
    };
    /** the status as `posthorn mta status --json` prints it; `inProcess`: read here, fast enough for a short suspension */
    const status = async (inProcess = false) => {
      if (inProcess)
        return (await mtaStatus(w.db.store, Date.now())).providers.find((p) => p.name === 'slowpost')! as Record<
          string,
          any
        >;
      const r = await runCli(['mta', 'status', '--json', '--config', config]);
      expect(r.code, r.stderr).to.equal(0);
      return (r.json as { providers: Array<Record<string, any>> }).providers.find((p) => p.name === 'slowpost')!;
    };

    it('suspends the provider, keeps other providers going, probes once per suspension and delivers everything once', async function () {
      // three go through before the provider starts refusing
      for (let i = 0; i < 3; i++)
        await waitEmail(t.api, await send(`warm${i}@d${i}.slowpost-hosted.test`), (e) => e.status === 'accepted');
      const held = await Promise.all(Array.from({ length: 6 }, (_, i) => send(`r${i}@d${i}.slowpost-hosted.test`)));
      const throttledAt = await waitFor(async () => seen.find((s) => s.throttled)?.at, 15_000, 'the first throttle');
      const others = await Promise.all(Array.from({ length: 3 }, (_, i) => send(`other${i}@ok.test`)));

      // the other provider is not slowed: its mail arrives while this one is suspended
      for (const id of others) await waitEmail(t.api, id, (e) => e.status === 'accepted');
      const during = await status(true);
      expect(during.state).to.equal('suspended');
      expect(during.reason).to.contain('4.7.28');
      expect(Date.parse(during.until)).to.be.greaterThan(throttledAt);
      expect(during.last_hour.throttled).to.be.greaterThan(0);
      // half the limit after the throttle (a quarter if a loaded machine let the probe be throttled too)
      expect(during.rate_per_minute).to.be.oneOf([300, 150]);
      expect(Date.now(), 'mail to the other provider waited for the suspension').to.be.lessThan(
        throttledAt + SUSPEND_S * 1000,
      );

      // the recipients held back are deferred with the reply, never bounced
      const e0 = await waitEmail(t.api, held[5], (e) => e.recipients[0].status === 'deferred');
      expect(e0.status).to.not.equal('failed');

      // the dashboard says so: a banner on the emails page, the reason beside the deferred recipient
      const list = await dashboardPage(w.api.baseUrl, t.key, '/emails');
      expect(list).to.contain('Some mail is held back');
      expect(list).to.match(
        /<strong>slowpost<\/strong> asked this server to slow down: \d+ messages? waiting, until <time/,
      );
      expect(list).to.contain('4.7.28');
      // and /metrics, for the operator's alerts
      const metrics = await (await fetch(`${w.api.baseUrl}/metrics`)).text();
      expect(metrics).to.match(/^posthorn_mta_provider_suspended\{[^}]*provider="slowpost"[^}]*\} 1$/m);
      expect(metrics).to.match(/^posthorn_mta_provider_rate_per_minute\{[^}]*provider="slowpost"[^}]*\} (300|150)$/m);
      expect(metrics).to.match(
        /^posthorn_mta_provider_messages_total\{[^}]*provider="slowpost"[^}]*outcome="throttled"[^}]*\} [1-9]/m,
      );
      // the sink's own provider is not in the table: counted as other
      expect(metrics).to.match(/^posthorn_mta_provider_messages_total\{[^}]*provider="other"[^}]*outcome="delivered"/m);
      const page = await dashboardPage(w.api.baseUrl, t.key, `/emails/${held[5]}`);
      expect(page).to.match(/<td class="why">Waiting: slowpost suspended this sender until [^<]*after: 421 4\.7\.28/);

      // the probe after the suspension is refused again: a second suspension, one probe each
      const probe = await waitFor(
        async () => seen.find((s) => s.throttled && s.at >= throttledAt + SUSPEND_S * 1000 - 100),
        20_000,
        'the probe after the first suspension',
      );
      throttling = false;
      for (const id of held) await waitEmail(t.api, id, (e) => e.status === 'accepted', 40_000);

      const inFirst = seen.filter((s) => s.at > throttledAt + 500 && s.at < probe.at);
      expect(inFirst, 'messages sent into the first suspension').to.deep.equal([]);
      const afterProbe = seen.filter((s) => s.at > probe.at);
      // the next probe is the first to arrive after the second suspension, and only it until it was answered
      expect(afterProbe[0].at - probe.at).to.be.at.least(SUSPEND_S * 1000 - 100);
      if (afterProbe.length > 1) expect(afterProbe[1].at).to.be.at.least(afterProbe[0].at);

      // everything arrived exactly once, nothing bounced or failed
      for (let i = 0; i < 6; i++) expect(provider.messagesTo(`r${i}@d${i}.slowpost-hosted.test`)).to.have.length(1);
      for (const id of held) {
        const e = (await t.api.get(`/v1/emails/${id}`)).body;
        expect(e.recipients[0].status).to.equal('delivered');
      }

      // each suspension halved the rate (600 → 300 → 150, once more if a loaded machine let a probe be
      // throttled again); since the probe got through it climbs with each accepted message
      const throttles = seen.filter((x) => x.throttled).map((x) => x.at);
      const suspensions = throttles.filter((at, i) => i === 0 || at - throttles[i - 1] > 1000).length;
      const floor = 600 / 2 ** suspensions;
      const after = await waitFor(
        async () => {
          const s = await status();
          // the counts are written every few seconds: the three before the throttle and the six held back
          return s.state === 'open' && s.rate_per_minute > floor && s.last_hour.delivered >= 9 ? s : null;
        },
        15_000,
        `the provider open again in the status, its rate climbing from ${floor}`,
      );
      expect(after.rate_per_minute).to.be.within(floor + 1, 599);
      expect(after.last_hour.delivered).to.equal(9);
      expect(after.queued).to.equal(0);
    });

    it('sends transactional mail before broadcast mail once the provider takes mail again', async function () {
      throttling = true;
      const since = seen.length;
      const first = await send('t0@d0.slowpost-hosted.test');
      await waitFor(async () => seen.slice(since).find((x) => x.throttled), 15_000, 'the throttle');
      // while suspended: three more receipts and a broadcast to four contacts of the provider's domains
      const receipts = await Promise.all([1, 2, 3].map((i) => send(`t${i}@d${i}.slowpost-hosted.test`)));
      const audience = (await t.api.post('/v1/audiences', { name: 'news' })).body.id as string;
      const contacts = await Promise.all(
        [4, 5, 6, 7].map((i) => t.api.post('/v1/contacts', { email: `b${i}@d${i}.slowpost-hosted.test` })),
      );
      await t.api.post(`/v1/audiences/${audience}/contacts`, { contact_ids: contacts.map((c) => c.body.id) });
      await sendBroadcast(t.api, from, audience);
      throttling = false;
      for (const id of [first, ...receipts]) await waitEmail(t.api, id, (e) => e.status === 'accepted', 40_000);
      await waitFor(
        async () => (provider.messages.filter((m) => m.envelope.to[0].startsWith('b')).length === 4 ? true : null),
        40_000,
        'the broadcast',
      ).catch(async (e: unknown) => {
        const rows = await w.db.store
          .reader('outbound_queue')
          .select('route', 'state', 'bulk', 'attempts', 'next_attempt_at');
        const bc = await w.db.store
          .reader('email_recipients')
          .select('address', 'status', 'details')
          .where('address', 'like', 'b%');
        throw new Error(
          `${(e as Error).message}; now ${Date.now()}; queue ${JSON.stringify(rows)}; broadcast ${JSON.stringify(bc)}; seen ${JSON.stringify(seen.slice(since))}`,
        );
      });
      // the arrivals after the suspension: the probe and the other receipts first, then the newsletter
      const order = seen
        .slice(since)
        .filter((x) => !x.throttled)
        .map((x) => x.address[0]);
      expect(order[0], 'the probe').to.equal('t');
      expect(
        order.slice(0, 5).filter((c) => c === 't'),
        order.join(''),
      ).to.have.length(4);
      expect(order).to.have.length(8);
    });
  });
}
