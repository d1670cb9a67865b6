import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { client } from '../helpers/http.js';
import { startServe, writeConfig, type ServeProcess } from '../helpers/process.js';

/** `# TYPE name type` of the Prometheus text: each family's type. */
function familyTypes(text: string): Map<string, string> {
  const types = new Map<string, string>();
  for (const m of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    expect(types.has(m[1]), `${m[1]} declared once`).to.equal(false);
    types.set(m[1], m[2]);
  }
  return types;
}

// Prometheus's naming rules (https://prometheus.io/docs/practices/naming/), which
// `promtool check metrics` enforces: a counter's name ends in _total and nothing else's does.
describe('the names of GET /metrics in posthorn serve', function () {
  this.timeout(60_000);
  let app: ServeProcess;
  let text: string;

  before(async function () {
    const { path } = writeConfig({ dns: { server: { enabled: false } }, blocklists: { lists: [] } });
    app = await startServe(path, {}, 30_000);
    // series in every family that has labels: a request, an accepted email
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
    await fetch(`${app.baseUrl}/metrics`);
    const res = await fetch(`${app.baseUrl}/metrics`);
    expect(res.status).to.equal(200);
    text = await res.text();
  });

  after(async function () {
    await app?.stop();
  });

  it("end in _total for every counter, and for no gauge, histogram or summary (prom-client's nodejs_active_*_total gauges left out)", function () {
    const types = familyTypes(text);
    expect(types.get('process_cpu_seconds_total'), 'the default metrics are there').to.equal('counter');
    expect(types.get('nodejs_active_handles'), 'the handles by type stay').to.equal('gauge');
    const wrong = [...types]
      .filter(([name, type]) => (type === 'counter') !== name.endsWith('_total'))
      .map(([name, type]) => `${name} (${type})`);
    expect(wrong).to.deep.equal([]);
    for (const type of new Set(types.values()))
      expect(['counter', 'gauge', 'histogram', 'summary'], type).to.include(type);
  });

  it('pass `promtool check metrics` (Debian: apt-get install prometheus; .ci/run installs it)', function () {
    const check = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
    expect(check.status, check.stdout + check.stderr).to.equal(0);
    expect((check.stdout + check.stderr).trim()).to.equal('');
  });
});
