import { expect } from 'chai';
import { setProject } from '../../src/modules/account/projects/projects.service.js';
import type { Tenant } from '../helpers/api.js';
import { DATABASE_KINDS } from '../helpers/databases.js';
import { startLiveWorld, verifiedDomain, waitEmail, type LiveWorld } from '../helpers/live.js';
import { runCli, writeConfig } from '../helpers/process.js';

let n = 0;
const uid = (p: string) => `${p}-${Date.now().toString(36)}-${++n}`;

// What a bounce's reason does for a user (docs/bounces.md): only the reasons that say the address
// is gone suppress it; a project may suppress after repeated soft bounces of a lasting reason; the
// suppression shows the bounce that made it; and `posthorn suppressions review` finds the ones an
// older classifier made by mistake.
for (const kind of DATABASE_KINDS) {
  describe(`bounce reasons and the suppressions they make [${kind}]${kind === 'pg' ? ' @pg' : ''}`, function () {
    this.timeout(60_000);
    let w: LiveWorld;
    let t: Tenant;
    let from: string;
    let config: string;
    let domainId: string;

    before(async function () {
      w = await startLiveWorld('dkim.reasons.test', 'mta.reasons.test', {}, {}, kind);
      t = await w.api.tenant({ mode: 'live' });
      const d = await verifiedDomain(t, w.world);
      from = `shop@${d.domain}`;
      domainId = d.id;
      const o = w.db.options;
      config = writeConfig(
        o.client === 'pg' ? { database: { client: 'pg', url: o.url } } : { data_dir: o.dataDir },
      ).path;
    });
    after(async function () {
      await w.stop();
    });

    /** One live send to `to`, once its recipient is bounced: the recipient as GET /v1/emails/{id} shows it. */
    async function bounced(to: string) {
      const res = await t.api.post('/v1/emails', { from, to: [to], subject: 'Your receipt', text: 'x' });
      expect(res.status, res.text).to.equal(202);
      const e = await waitEmail(t.api, res.body.id, (x) => x.recipients?.[0]?.status === 'bounced');
      return { id: res.body.id as string, recipient: e.recipients[0] };
    }
    const suppression = async (address: string) =>
      (await t.api.get(`/v1/suppressions?email=${encodeURIComponent(address)}`)).body.data[0] ?? null;

    it('an unknown user is Permanent and suppressed, and the suppression shows the bounce that made it', async function () {
      const gone = `${uid('g')}@reject.test`;
      const { recipient } = await bounced(gone);
      expect(recipient.bounce).to.include({ bounce_type: 'Permanent', reason: 'user_unknown', status: '5.1.1' });
      const s = await suppression(gone);
      expect(s).to.include({ email: gone, reason: 'bounce' });
      expect(s.bounce).to.include({ reason: 'user_unknown', status: '5.1.1' });
      expect(s.bounce.diagnostic).to.match(/User unknown/);
    });

    it('a full mailbox bounces without suppressing; with --soft-bounce-suppression 2/30d the second within the window suppresses, expiring like other bounces', async function () {
      const full = `${uid('f')}@full.test`;
      const blocked = `${uid('b')}@blocklist.test`;
      expect((await bounced(full)).recipient.bounce).to.include({ bounce_type: 'Transient', reason: 'mailbox_full' });
      expect(await suppression(full)).to.equal(null);

      await setProject(w.api.deps, t.project.id, { softBounceSuppression: '2/30d', bounceSuppressionDays: 30 });
      try {
        await bounced(full);
        expect(await suppression(full), 'after one full-mailbox bounce under the policy').to.equal(null);
        await bounced(full);
        const s = await suppression(full);
        expect(s).to.include({ email: full, reason: 'bounce' });
        expect(s.bounce).to.include({ reason: 'mailbox_full', status: '5.2.2' });
        expect(Date.parse(s.expires_at) - Date.parse(s.created_at)).to.equal(30 * 86_400_000);
        // a reason that is not the mailbox's (a blocked sending IP) never counts
        for (let i = 0; i < 2; i++)
          expect((await bounced(blocked)).recipient.bounce).to.include({ reason: 'blocked', bounce_type: 'Transient' });
        expect(await suppression(blocked)).to.equal(null);
      } finally {
        await setProject(w.api.deps, t.project.id, { softBounceSuppression: 'off', bounceSuppressionDays: 0 });
      }
    });

    it('posthorn suppressions review lists a bounce suppression whose bounce now reads soft, and releases it only with --release', async function () {
      const gone = `${uid('g')}@reject.test`;
      await bounced(gone);
      // a suppression as an older classifier wrote it: a blocklist refusal read as Permanent, no reason kept
      const blocked = `${uid('b')}@blocklist.test`;
      const { id } = await bounced(blocked);
      await w.db.store.knex('suppressions').insert({
        project_id: t.project.id,
        address: blocked,
        reason: 'bounce',
        email_id: id,
        created_at: Date.now(),
      });
      const review = async (...args: string[]) => {
        const r = await runCli([
          'suppressions',
          'review',
          '--project',
          t.project.id,
          ...args,
          '--json',
          '--config',
          config,
        ]);
        expect(r.code, r.stderr).to.equal(0);
        return r.json as Array<Record<string, unknown>>;
      };

      const listed = await review();
      expect(listed).to.have.length(1);
      expect(listed[0]).to.include({
        email: blocked,
        suppressed_for: null,
        reason: 'blocked',
        bounce_type: 'Transient',
        releasable: true,
        released: false,
      });
      expect(listed[0].diagnostic).to.match(/spamhaus/);
      expect(await suppression(blocked), 'listed, not released').to.include({ reason: 'bounce' });
      const all = await review('--all');
      expect(all.find((r) => r.email === gone)).to.include({ suppressed_for: 'user_unknown', releasable: false });
      // the one the soft-bounce policy made in the test before was meant for a soft reason: not a mistake
      expect(all.find((r) => r.suppressed_for === 'mailbox_full')).to.include({
        reason: 'mailbox_full',
        releasable: false,
      });

      expect((await review('--release')).map((r) => [r.email, r.released])).to.deep.equal([[blocked, true]]);
      expect(await suppression(blocked)).to.equal(null);
      expect(await suppression(gone)).to.include({ reason: 'bounce' });
      expect(await review()).to.deep.equal([]);
    });

    it("the domain's insights count the window's bounces by reason, most first", async function () {
      // the tests above: two unknown users, three full mailboxes, three refusals of a blocklisted IP
      const insights = (await t.api.get(`/v1/domains/${domainId}/insights`)).body;
      expect(insights.bounces_by_reason).to.deep.equal({ blocked: 3, mailbox_full: 3, user_unknown: 2 });
      expect(Object.keys(insights.bounces_by_reason)).to.deep.equal(['blocked', 'mailbox_full', 'user_unknown']);
    });

    it('posthorn project set --soft-bounce-suppression takes "N/Md" and "off", and names the setting when it cannot read it', async function () {
      const set = (value: string) =>
        runCli(['project', 'set', t.project.id, '--soft-bounce-suppression', value, '--json', '--config', config]);
      expect((await set('3/30d')).json.soft_bounce_suppression).to.equal('3/30d');
      const bad = await set('3/30');
      expect(bad.code).to.not.equal(0);
      expect(JSON.parse(bad.stderr).error.message).to.match(/soft_bounce_suppression/);
      expect((await set('off')).json.soft_bounce_suppression).to.equal(null);
    });
  });
}
