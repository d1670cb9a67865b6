import { expect } from 'chai';
import type { Tenant } from '../helpers/api.js';
import { audienceOf, sendBroadcast, sentOf } from '../helpers/audience.js';
import { DATABASE_KINDS } from '../helpers/databases.js';
import {
  dashboardPage,
  delayReason,
  startLiveWorld,
  verifiedDomain,
  waitEmail,
  type LiveWorld,
} from '../helpers/live.js';
import { runCli, writeConfig } from '../helpers/process.js';
import { startSink, type SmtpSink } from '../helpers/smtp-sink.js';
import { waitFor } from '../helpers/wait.js';

// Outbound IP pools and warm-up (docs/delivery.md), seen where a receiver sees them: the address
// each message comes from. Linux answers for all of 127/8, so each source IP of outbound.ips is a
// loopback address of its own. A day passes on a clock the test moves.

const DAY = 86_400_000;
const IPS = [
  { address: '127.0.0.2', ehlo: 'tx1.pools.test', pool: 'tx' },
  { address: '127.0.0.3', ehlo: 'news1.pools.test', pool: 'news' },
  { address: '127.0.0.4', ehlo: 'warming.pools.test', pool: 'mixed', warmup: true },
  { address: '127.0.0.5', ehlo: 'warmed.pools.test', pool: 'mixed' },
  { address: '127.0.0.6', ehlo: 'fresh.pools.test', pool: 'fresh', warmup: true },
];

for (const kind of DATABASE_KINDS) {
  describe(`traffic shaping: source IPs, pools and warm-up [${kind}]${kind === 'pg' ? ' @pg' : ''}`, function () {
    this.timeout(90_000);
    let w: LiveWorld;
    let t: Tenant;
    let from: string;
    let config: string;
    let offset = 0;
    /** the provider that warm-up applies to: a second sink, its MX hosts under the provider's suffix */
    let warmSink: SmtpSink;
    let n = 0;

    before(async function () {
      w = await startLiveWorld(
        'dkim.pools.test',
        'mta.pools.test',
        {
          outbound: {
            ips: IPS,
            bulk_pool: 'news',
            providers: [{ name: 'bigmail', mx_suffixes: ['.mx.bigmail.test'], warmup: true }],
            warmup_schedule: [2, 4],
          },
          broadcasts: { max_per_second: 1000 },
        },
        { jobs: true },
        kind,
        { now: () => Date.now() + offset },
      );
      warmSink = await startSink({ host: '127.0.0.31', port: w.sink.port });
      w.world.add('bigmail.test', 'MX', { exchange: 'in.mx.bigmail.test', priority: 10 });
      w.world.add('in.mx.bigmail.test', 'A', '127.0.0.31');
      t = await w.api.tenant({ mode: 'live' });
      from = `shop@${(await verifiedDomain(t, w.world)).domain}`;
      const o = w.db.options;
      config = writeConfig({
        ...(o.client === 'pg' ? { database: { client: 'pg', url: o.url } } : { data_dir: o.dataDir }),
        outbound: {
          ips: IPS,
          bulk_pool: 'news',
          warmup_schedule: [2, 4],
        },
      }).path;
    });
    after(async function () {
      await warmSink?.stop();
      await w?.stop();
    });

    const cli = async (...args: string[]) => {
      const r = await runCli([...args, '--json', '--config', config]);
      expect(r.code, r.stderr).to.equal(0);
      return r.json;
    };
    /** sets the project's pool, and waits the second the MTA may take to see it */
    const pool = async (name: string) => {
      const p = await cli('project', 'set', t.project.id, '--ip-pool', name);
      await new Promise((r) => setTimeout(r, 1100));
      return p;
    };
    const send = async (to: string) => {
      const r = await t.api.post('/v1/emails', { from, to: [to], subject: `Receipt ${++n}`, text: 'Thanks' });
      expect(r.status, r.text).to.equal(202);
      return r.body.id as string;
    };
    /** the source address and EHLO name of the message to `to`, once it arrived */
    const arrival = async (sink: SmtpSink, to: string) => (await sink.waitForMessage(to, 20_000)).remoteAddress;

    it("sends a project's mail from its pool and broadcasts from the bulk pool, each address with its own EHLO name", async function () {
      expect((await pool('tx')).ip_pool).to.equal('tx');
      const id = await send('receipt@ok.test');
      expect(await arrival(w.sink, 'receipt@ok.test')).to.equal('127.0.0.2');
      expect(w.sink.messagesTo('receipt@ok.test')[0].helo).to.equal('tx1.pools.test');
      await waitEmail(t.api, id, (e) => e.status === 'accepted');

      const audience = await audienceOf(t.api, 'pools', 3);
      const b = await sendBroadcast(t.api, from, audience);
      await sentOf(t.api, b, 30_000);
      for (let i = 0; i < 3; i++) expect(await arrival(w.sink, `c${i}-pools@ok.test`)).to.equal('127.0.0.3');

      // a pool no address is in is refused, naming the field
      const bad = await runCli(['project', 'set', t.project.id, '--ip-pool', 'nope', '--json', '--config', config]);
      expect(bad.code).to.not.equal(0);
      expect(JSON.parse(bad.stderr).error.message).to.match(/ip_pool.*nope/);
    });

    it("sends past a warming IP over its day's cap from a warmed IP of the pool", async function () {
      await pool('mixed');
      const ids = await Promise.all(Array.from({ length: 6 }, (_, i) => send(`mixed${i}@bigmail.test`)));
      for (const id of ids) await waitEmail(t.api, id, (e) => e.status === 'accepted', 20_000);
      const from = warmSink.messages.map((m) => m.remoteAddress);
      expect(from.filter((a) => a === '127.0.0.4')).to.have.length(2);
      expect(from.filter((a) => a === '127.0.0.5')).to.have.length(4);
    });

    it('holds mail over the cap of a pool that only warms, deferred with the reason, and sends it the next day', async function () {
      await pool('fresh');
      const before = warmSink.messages.length;
      const ids = await Promise.all(Array.from({ length: 5 }, (_, i) => send(`fresh${i}@bigmail.test`)));
      // two go today; the other three wait, deferred, with warm-up as their reason, none bounced
      const waiting = [];
      for (const id of ids) {
        const e = await waitEmail(
          t.api,
          id,
          (x) => x.status === 'accepted' || x.recipients[0].status === 'deferred',
          20_000,
        );
        if (e.recipients[0].status === 'deferred') waiting.push(e);
      }
      expect(warmSink.messages.length - before).to.equal(2);
      expect(waiting).to.have.length(3);
      for (const e of waiting) {
        const events = (await t.api.get(`/v1/emails/${e.id}/events`)).body.data as Array<Record<string, any>>;
        const delayed = events.filter((x) => x.type === 'email.delivery_delayed');
        expect(delayed, JSON.stringify(events)).to.have.length(1);
        expect(delayed[0].data.details.diagnostic).to.match(
          /warm-up: 127\.0\.0\.6 has sent today's 2 messages to bigmail/,
        );
        expect(events.map((x) => x.type)).to.not.include('email.bounced');
      }
      // the MTA writes its counts every few seconds
      const fresh = await waitFor(
        async () => {
          const ip = (await cli('mta', 'status')).ips.find((x: { address: string }) => x.address === '127.0.0.6');
          return ip.sent_today.bigmail === 2 ? ip : null;
        },
        15_000,
        'the warm-up counts in the status',
      );
      expect(fresh).to.deep.include({ warmup: true, warmup_day: 1, daily_cap: 2, pool: 'fresh' });
      expect(fresh.sent_today).to.deep.equal({ bigmail: 2 });
      // the project's dashboard says why its mail waits, how much, and how far its address has warmed
      const list = await dashboardPage(w.api.baseUrl, t.key, '/emails');
      expect(list).to.contain('Some mail is held back');
      expect(list).to.match(
        /<strong>Warm-up cap<\/strong>: 3 messages waiting, next attempt <time[^>]*>[^<]*<\/time> — <q>warm-up: 127\.0\.0\.6/,
      );
      expect(list).to.contain(
        '<strong>127.0.0.6</strong> (pool fresh): day 1, up to 2 messages per provider today; sent today: bigmail 2',
      );
      // another pool's addresses are not this project's
      expect(list).to.not.contain('127.0.0.4');

      // the next day the cap is 4: the three go
      offset += DAY;
      for (const id of ids) await waitEmail(t.api, id, (e) => e.status === 'accepted', 30_000);
      const sent = warmSink.messages.slice(before).map((m) => m.remoteAddress);
      expect(sent).to.deep.equal(Array(5).fill('127.0.0.6'));
      for (let i = 0; i < 5; i++) expect(warmSink.messagesTo(`fresh${i}@bigmail.test`)).to.have.length(1);
      // nothing waits any more; day 2's progress shows
      const after = await dashboardPage(w.api.baseUrl, t.key, '/emails');
      expect(after).to.not.contain('Some mail is held back');
      expect(after).to.contain('<strong>127.0.0.6</strong> (pool fresh): day 2, up to 4 messages per provider today');
    });

    it('says on the dashboard when mail waits for DNS lookups that fail, and clears once they answer', async function () {
      await pool('tx');
      w.world.add('flaky.test', 'MX', { exchange: 'mx.flaky.test', priority: 10 });
      w.world.add('mx.flaky.test', 'A', '127.0.0.1');
      w.world.fail('flaky.test', 'MX');
      const ids = [await send('a@flaky.test'), await send('b@flaky.test')];
      for (const id of ids)
        expect(await delayReason(t.api, id)).to.match(/^451 4\.4\.3 DNS lookup for flaky\.test failed/);
      const list = await dashboardPage(w.api.baseUrl, t.key, '/emails');
      expect(list).to.match(
        /<strong>DNS lookups failing<\/strong>: 2 messages waiting, next attempt <time[^>]*>[^<]*<\/time> — <q>451 4\.4\.3 DNS lookup for flaky\.test failed/,
      );
      // DNS answers again; the retry (a minute later on the schedule) delivers both, and the banner is gone
      w.world.unfail('flaky.test', 'MX');
      offset += 2 * 60_000;
      for (const id of ids) await waitEmail(t.api, id, (e) => e.status === 'accepted', 30_000);
      expect(w.sink.messagesTo('a@flaky.test')).to.have.length(1);
      expect(await dashboardPage(w.api.baseUrl, t.key, '/emails')).to.not.contain('DNS lookups failing');
    });
  });
}
