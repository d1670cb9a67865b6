import { expect } from 'chai';
import { client } from '../helpers/http.js';
import { startLiveWorld, verifiedDomain, waitEmail, type LiveWorld } from '../helpers/live.js';
import { histogramCount, parseMetrics, valueOf, type PromFamily } from '../helpers/prometheus.js';
import { startServe, writeConfig } from '../helpers/process.js';
import { waitFor } from '../helpers/wait.js';

const scrape = async (baseUrl: string): Promise<{ text: string; families: Map<string, PromFamily> }> => {
  const res = await fetch(`${baseUrl}/metrics`);
  expect(res.status).to.equal(200);
  expect(res.headers.get('content-type')).to.match(/^text\/plain; version=0\.0\.4/);
  const text = await res.text();
  return { text, families: parseMetrics(text) };
};

// CONTRACT §5: GET /metrics, Prometheus text, no key
describe('GET /metrics (issue 23)', function () {
  this.timeout(30_000);
  let live: LiveWorld;
  before(async function () {
    live = await startLiveWorld('dkim.metrics.test', 'mta.metrics.test');
  });
  after(async function () {
    await live.stop();
  });

  it('answers without a key, and its counters move when live mail is accepted, delivered and bounced', async function () {
    const t = await live.api.tenant({ mode: 'live' });
    const { domain } = await verifiedDomain(t, live.world);
    const { families: before, text: textBefore } = await scrape(live.api.baseUrl);
    const sent = await t.api.post('/v1/emails', {
      from: `app@${domain}`,
      to: ['someone-private@ok.test', 'gone@reject.test'],
      subject: 's',
      text: 't',
    });
    expect(sent.status, sent.text).to.equal(202);
    await waitEmail(t.api, sent.body.id, (e) =>
      e.recipients.every((r: { status: string }) => r.status === 'delivered' || r.status === 'bounced'),
    );
    // the MTA's thread counts an outcome once its commit returns to it, which a reader of the email
    // can see a moment before: the scrape is asked again until the two outcomes are counted
    const outcomes = (f: Map<string, PromFamily>) => valueOf(f, 'posthorn_deliveries_total');
    const { families: after, text: textAfter } = await waitFor(
      async () => {
        const s = await scrape(live.api.baseUrl);
        return outcomes(s.families) - outcomes(before) >= 2 ? s : null;
      },
      5000,
      'the two outcomes in posthorn_deliveries_total',
    );
    const moved = (name: string, labels: Record<string, string> = {}) =>
      valueOf(after, name, labels) - valueOf(before, name, labels);
    expect(moved('posthorn_http_requests_total', { method: 'POST', route: '/v1/emails', status: '202' })).to.equal(1);
    const timed = { method: 'POST', route: '/v1/emails' };
    expect(
      histogramCount(textAfter, 'posthorn_http_request_duration_seconds', timed) -
        histogramCount(textBefore, 'posthorn_http_request_duration_seconds', timed),
    ).to.equal(1);
    expect(after.get('posthorn_http_request_duration_seconds')?.type).to.equal('HISTOGRAM');
    expect(moved('posthorn_accept_commits_total')).to.be.at.least(1);
    expect(
      histogramCount(textAfter, 'posthorn_accept_batch_size', {}) -
        histogramCount(textBefore, 'posthorn_accept_batch_size', {}),
    ).to.be.at.least(1);
    expect(moved('posthorn_deliveries_total', { outcome: 'delivered' })).to.equal(1);
    expect(moved('posthorn_deliveries_total', { outcome: 'bounced', reason: 'user_unknown' })).to.equal(1);
    expect(moved('posthorn_dns_record_checks_total')).to.equal(0);
    expect(valueOf(after, 'posthorn_dns_record_checks_total', { result: 'found' })).to.be.at.least(3);
    for (const family of [
      'posthorn_queue_depth',
      'posthorn_event_loop_lag_p99_seconds',
      'posthorn_smtp_sessions_open',
      'posthorn_webhook_attempts_total',
    ]) {
      expect(after.has(family), family).to.equal(true);
    }
    expect(after.get('posthorn_queue_depth')!.metrics.map((m) => m.labels?.state)).to.include.members([
      'queued',
      'submitting',
    ]);
  });

  it('labels by route template, never by path, project or address', async function () {
    const t = await live.api.tenant();
    await t.api.get('/v1/emails/msg_00000000000000000000000000');
    const { text, families } = await scrape(live.api.baseUrl);
    expect(
      valueOf(families, 'posthorn_http_requests_total', { route: '/v1/emails/:id', status: '404' }),
    ).to.be.at.least(1);
    expect(text).to.not.include('msg_0000');
    expect(text).to.not.include(t.project.id);
    expect(text).to.not.include('someone-private');
  });
});

describe('metrics in posthorn serve (issue 23)', function () {
  this.timeout(60_000);

  it("merges the background thread's counters (the accept's commits) with the API thread's, each labelled with its thread", async function () {
    const { path } = writeConfig({ dns: { server: { enabled: false } } });
    const app = await startServe(path);
    try {
      const key = app.output().match(/ph_test_[A-Za-z0-9]{40}/)![0];
      expect(
        (
          await client(app.baseUrl, key).post('/v1/emails', {
            from: 'app@example.test',
            to: ['a@example.test'],
            subject: 's',
            text: 't',
          })
        ).status,
      ).to.equal(202);
      const { families } = await scrape(app.baseUrl);
      expect(valueOf(families, 'posthorn_accept_commits_total', { thread: 'background' })).to.be.at.least(1);
      expect(
        valueOf(families, 'posthorn_http_requests_total', { route: '/v1/emails', status: '202', thread: 'api' }),
      ).to.equal(1);
      expect(
        families
          .get('posthorn_event_loop_lag_p99_seconds')
          ?.metrics.map((m) => m.labels?.thread)
          .sort(),
      ).to.deep.equal(['api', 'background']);
      // process metrics once, from the API thread
      expect(families.get('process_cpu_seconds_total')?.metrics.map((m) => m.labels?.thread)).to.deep.equal(['api']);
    } finally {
      await app.stop();
    }
  });

  it('serves /metrics on a listener of its own when metrics.port is set, and not on the API listener', async function () {
    const { path } = writeConfig({ dns: { server: { enabled: false } }, metrics: { port: 0 } });
    const app = await startServe(path);
    try {
      const port = await waitFor(
        async () => /"port":(\d+),"msg":"metrics listening"/.exec(app.output())?.[1],
        5_000,
        'the metrics listener',
      );
      expect((await fetch(`http://127.0.0.1:${port}/metrics`)).status).to.equal(200);
      expect((await fetch(`http://127.0.0.1:${port}/v1/emails`)).status).to.equal(404);
      expect((await fetch(`${app.baseUrl}/metrics`)).status).to.equal(404);
      const doc = (await (await fetch(`${app.baseUrl}/v1/openapi.json`)).json()) as { paths: Record<string, unknown> };
      expect(doc.paths).to.not.have.property('/metrics');
    } finally {
      await app.stop();
    }
  });
});
