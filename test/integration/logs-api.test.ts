import { expect } from 'chai';
import { eachDatabase } from '../helpers/databases.js';
import { startTestApi, type TestApi } from '../helpers/api.js';
import { expectError } from '../helpers/assert.js';
import type { Reply } from '../helpers/http.js';
import { waitFor } from '../helpers/wait.js';
import { client } from '../helpers/http.js';
import { startServe, writeConfig } from '../helpers/process.js';
import { silentLogger } from '../../src/log/logger.js';
import { requestLogService } from '../../src/modules/account/logs/logs.service.js';
import { GroupCommit } from '../../src/store/group-commit.js';

const DAY = 86_400_000;

eachDatabase('request logs route (CONTRACT §5, issue 23)', (db) => {
  let api: TestApi;
  // the clock the app logs with: a test moves it to see the retention at work
  let offset = 0;
  before(async function () {
    api = await startTestApi(db().store, {}, { clock: { now: () => Date.now() + offset } });
  });
  after(async function () {
    await api.stop();
  });

  /**
   * The project's log without the reads of the log itself (which are logged too),
   * once it holds `n` lines: lines are written about a second after their request.
   */
  const logsOf = (t: { api: { get(p: string): Promise<Reply> } }, n: number) =>
    waitFor(
      async () => {
        const r = await t.api.get('/v1/logs?limit=100');
        const lines = r.body.data.filter((l: { path: string }) => l.path !== '/v1/logs');
        return lines.length >= n ? lines : null;
      },
      5_000,
      `${n} log lines`,
    );

  it('shows each request made with a key: method, path without the query, status, request id, key id, duration; never bodies or the key', async function () {
    const t = await api.tenant();
    const sent = await t.api.post('/v1/emails', {
      from: 'a@example.test',
      to: ['secret-recipient@example.test'],
      subject: 'very private subject',
      text: 't',
    });
    expect(sent.status).to.equal(202);
    const bad = await t.api.post('/v1/emails', { from: 'a@example.test' });
    expect(bad.status).to.equal(400);
    const missing = await t.api.get('/v1/emails/msg_00000000000000000000000000?token=hush');
    expect(missing.status).to.equal(404);
    const lines = await logsOf(t, 3);
    expect(
      lines.slice(0, 3).map((l: { method: string; path: string; status: number }) => [l.method, l.path, l.status]),
    ).to.deep.equal([
      ['GET', '/v1/emails/msg_00000000000000000000000000', 404],
      ['POST', '/v1/emails', 400],
      ['POST', '/v1/emails', 202],
    ]);
    expect(lines[2]).to.include({ object: 'request_log', request_id: sent.headers.get('request-id'), key_id: t.keyId });
    expect(lines[2].id).to.match(/^log_[0-9a-z]{26}$/);
    expect(lines[2].duration_ms).to.be.a('number').at.least(0);
    expect(Date.parse(lines[2].created_at)).to.be.closeTo(Date.now(), 60_000);
    const text = JSON.stringify(lines);
    for (const secret of ['secret-recipient', 'very private subject', 'hush', t.key])
      expect(text).to.not.include(secret);
  });

  it('filters by status class or status and by path, pages newest first, and shows a project only its own requests', async function () {
    const t = await api.tenant();
    for (let i = 0; i < 3; i++) await t.api.get('/v1/emails');
    await t.api.get('/v1/emails/msg_00000000000000000000000000');
    await t.api.get('/v1/domains');
    await t.api.get('/v1/nothing-here');
    const all = await logsOf(t, 6);
    expect(all).to.have.length(6);
    const paths = (q: string) =>
      t.api
        .get(`/v1/logs?${q}`)
        .then((r) =>
          r.body.data
            .filter((l: { path: string }) => l.path !== '/v1/logs')
            .map((l: { path: string; status: number }) => `${l.status} ${l.path}`),
        );
    expect(await paths('status=4xx')).to.deep.equal([
      '404 /v1/nothing-here',
      '404 /v1/emails/msg_00000000000000000000000000',
    ]);
    expect(await paths('status=404&path=/v1/emails')).to.deep.equal(['404 /v1/emails/msg_00000000000000000000000000']);
    expect(await paths('path=/v1/emails')).to.have.length(4);
    expect(await paths('path=/v1/email')).to.have.length(0);
    expect(await paths('status=2xx&path=/v1/domains')).to.deep.equal(['200 /v1/domains']);
    // the reads of the log are in it too
    expect((await t.api.get('/v1/logs?path=/v1/logs')).body.data.length).to.be.at.least(1);

    const first: Reply = await t.api.get('/v1/logs?limit=4');
    expect(first.body.data).to.have.length(4);
    const second: Reply = await t.api.get(`/v1/logs?limit=4&cursor=${first.body.next_cursor}`);
    // reads of the log included, newest first
    const ids = [...first.body.data, ...second.body.data].map((l: { id: string }) => l.id);
    expect(ids).to.deep.equal([...ids].sort().reverse());
    expect(new Set(ids).size).to.equal(ids.length);

    const other = await api.tenant();
    await other.api.get('/v1/templates');
    const theirs = await logsOf(other, 1);
    expect(theirs.map((l: { key_id: string; path: string }) => [l.key_id, l.path])).to.deep.equal([
      [other.keyId, '/v1/templates'],
    ]);
  });

  it('needs a key with logs:read, and refuses bad filters naming the field', async function () {
    const t = await api.tenant({ scopes: ['emails:read'] });
    expectError(await t.api.get('/v1/logs'), 403, 'forbidden');
    expectError(await api.anonymous.get('/v1/logs'), 401, 'unauthorized');
    const r = await api.tenant({ scopes: ['logs:read'] });
    expectError(await r.api.get('/v1/logs?status=6xx'), 400, 'validation_error', 'status');
    expectError(await r.api.get('/v1/logs?path=emails'), 400, 'validation_error', 'path');
    expectError(await r.api.get('/v1/logs?cursor=req_1'), 400, 'validation_error', 'cursor');
    expectError(await r.api.get('/v1/logs?method=GET'), 400, 'validation_error', 'method');
  });

  it('keeps requests for logs.retention: the prune job removes older ones only', async function () {
    const t = await api.tenant();
    await t.api.get('/v1/domains');
    await logsOf(t, 1);
    offset = 15 * DAY;
    try {
      await t.api.get('/v1/emails');
      await logsOf(t, 2);
      const logs = requestLogService({
        store: api.deps.store,
        writer: new GroupCommit(api.deps.store),
        clock: { now: () => Date.now() + offset },
        logger: silentLogger(),
      });
      expect(await logs.prune(14 * DAY)).to.be.at.least(1);
      const left = (await logsOf(t, 1)).map((l: { path: string }) => l.path);
      expect(left).to.include('/v1/emails');
      expect(left).to.not.include('/v1/domains');
    } finally {
      offset = 0;
    }
  });
});

describe('request logs in posthorn serve (issue 23)', function () {
  this.timeout(60_000);

  it('are written by the background thread, and the last ones before a stop are kept', async function () {
    const { path } = writeConfig({ dns: { server: { enabled: false } } });
    const first = await startServe(path);
    const key = first.output().match(/ph_test_[A-Za-z0-9]{40}/)![0];
    const api = client(first.baseUrl, key);
    try {
      await api.get('/v1/domains');
      const lines = await waitFor(
        async () => {
          const data = (await api.get('/v1/logs')).body.data as Array<{ path: string }>;
          return data.some((l) => l.path === '/v1/domains') ? data : null;
        },
        5_000,
        'the request in the log',
      );
      expect(lines.find((l) => l.path === '/v1/domains')).to.include({ method: 'GET', status: 200 });
      // answered, then SIGTERM at once: its line is written before the process ends
      expect((await api.get('/v1/templates')).status).to.equal(200);
    } finally {
      expect(await first.stop()).to.equal(0);
    }
    const second = await startServe(path);
    try {
      const paths = (await client(second.baseUrl, key).get('/v1/logs?limit=100')).body.data.map(
        (l: { path: string }) => l.path,
      );
      expect(paths).to.include('/v1/templates');
    } finally {
      await second.stop();
    }
  });
});
