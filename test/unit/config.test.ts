import { expect } from 'chai';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../helpers/temp-dir.js';
import { buildConfig, loadConfig, DEFAULT_CONFIG_PATH } from '../../src/config/load.js';
import { ConfigError } from '../../src/config/config.js';

function configFile(yaml: string): string {
  const dir = tempDir('posthorn-config-');
  const path = join(dir, 'posthorn.yaml');
  writeFileSync(path, yaml);
  return path;
}

describe('config loading', function () {
  context('when the file sets only a few keys', function () {
    it('fills every other key of CONTRACT §2 with its default', function () {
      const c = loadConfig({ path: configFile('http:\n  port: 9000\n'), env: {} });
      expect(c.http).to.deep.equal({ host: '127.0.0.1', port: 9000, publicUrl: 'http://localhost:8025' });
      expect(c.database).to.deep.equal({ client: 'sqlite', url: null });
      expect(c.smtp.inbound).to.deep.equal({
        enabled: true,
        host: '0.0.0.0',
        port: 2525,
        maxMessageBytes: 25 * 1024 * 1024,
      });
      expect(c.smtp.submission).to.deep.equal({
        enabled: true,
        host: '0.0.0.0',
        port: 2587,
        maxMessageBytes: 15 * 1024 * 1024,
        secure: false,
      });
      expect(c.outbound.retryDelaysMs).to.deep.equal([
        60_000, 300_000, 900_000, 3_600_000, 7_200_000, 14_400_000, 28_800_000, 57_600_000,
      ]);
      expect(c.outbound.maxConnectionsPerDomain).to.equal(5);
      expect(c.outbound.mxPort).to.equal(25);
      expect(c.dns).to.deep.equal({
        resolvers: [],
        zone: 'dkim.localhost',
        server: { enabled: false, host: '0.0.0.0', port: 53 },
      });
      expect(c.testDomain).to.equal('simulator.posthorn.test');
      expect(c.webhooks.timeoutMs).to.equal(10_000);
      expect(c.webhooks.attemptDelaysMs).to.have.length(8);
      expect(c.network.allowPrivate).to.equal(false);
      expect(c.limits).to.deep.equal({
        requestsPerSecond: 50,
        idempotencyTtlMs: 86_400_000,
        authFailuresPerIp: 10,
        authFailureWindowMs: 900_000,
      });
      expect(c.smtp.limits).to.deep.equal({
        maxClientsPerIp: 20,
        sessionTimeoutMs: 1_800_000,
        dataTimeoutMs: 600_000,
        minDataRate: 500,
        hardErrorLimit: 20,
      });
      expect(c.parsing).to.deep.equal({ threads: null, timeBudgetMs: 10_000, memoryMb: 256 });
      expect(c.jobs.domainRecheck).to.equal('*/15 * * * *');
    });

    it('resolves relative paths against the config file folder', function () {
      const path = configFile('data_dir: ./state\nwebhooks:\n  ca_file: certs/ca.pem\n');
      const c = loadConfig({ path, env: {} });
      expect(c.dataDir).to.equal(join(path, '..', 'state'));
      expect(c.webhooks.caFile).to.equal(join(path, '..', 'certs', 'ca.pem'));
    });
  });

  context('when a key is unknown or has the wrong type', function () {
    it('refuses an unknown key and names it', function () {
      expect(() => loadConfig({ path: configFile('http:\n  prot: 80\n'), env: {} })).to.throw(
        ConfigError,
        /unknown config key "http\.prot"/,
      );
    });

    it('refuses an unknown top-level key and names it', function () {
      expect(() => buildConfig({ colour: 'blue' }, null)).to.throw(ConfigError, /"colour"/);
    });

    it('refuses a wrong type and names the key', function () {
      expect(() => loadConfig({ path: configFile('http:\n  port: eighty\n'), env: {} })).to.throw(
        ConfigError,
        /"http\.port" must be an integer/,
      );
    });

    it('refuses a bad duration and names the list item', function () {
      expect(() => buildConfig({ outbound: { retry_schedule: ['1m', 'soon'] } }, null)).to.throw(
        ConfigError,
        /outbound\.retry_schedule\[1\]/,
      );
    });

    it('refuses a value outside the allowed set', function () {
      expect(() => buildConfig({ database: { client: 'mysql' } }, null)).to.throw(
        ConfigError,
        /"database\.client" must be one of: sqlite, pg/,
      );
    });

    it('refuses a cron expression node-cron cannot run', function () {
      expect(() => buildConfig({ jobs: { domain_recheck: 'every 15 minutes' } }, null)).to.throw(
        ConfigError,
        /jobs\.domain_recheck/,
      );
    });

    it('requires database.url with the pg client', function () {
      expect(() => buildConfig({ database: { client: 'pg' } }, null)).to.throw(ConfigError, /database\.url/);
    });
  });

  context('when POSTHORN_ environment variables are set', function () {
    it('overrides keys with values read by their type', function () {
      const c = loadConfig({
        path: configFile('http:\n  port: 9000\n'),
        env: {
          POSTHORN_HTTP__PORT: '9100',
          POSTHORN_NETWORK__ALLOW_PRIVATE: 'true',
          POSTHORN_OUTBOUND__RETRY_SCHEDULE: '1s, 2s',
          POSTHORN_DNS__RESOLVERS: '["127.0.0.1:5300"]',
          POSTHORN_DATABASE__URL: 'postgres://x@127.0.0.1/db',
          POSTHORN_SMTP__TLS__KEY: '',
        },
      });
      expect(c.http.port).to.equal(9100);
      expect(c.network.allowPrivate).to.equal(true);
      expect(c.outbound.retryDelaysMs).to.deep.equal([1000, 2000]);
      expect(c.dns.resolvers).to.deep.equal(['127.0.0.1:5300']);
      expect(c.database.url).to.equal('postgres://x@127.0.0.1/db');
      expect(c.smtp.tls.key).to.equal(null);
    });

    it('refuses an override of an unknown key under a known section, naming the variable', function () {
      expect(() => loadConfig({ path: configFile(''), env: { POSTHORN_HTTP__PROT: '1' } })).to.throw(
        ConfigError,
        /POSTHORN_HTTP__PROT/,
      );
    });

    it('reads a file whose sections share settings through YAML anchors', function () {
      const c = loadConfig({
        path: configFile(
          'http: &l\n  host: 127.0.0.2\nsmtp:\n  inbound: *l\n  submission:\n    <<: *l\n    port: 2601\n',
        ),
        env: {},
      });
      expect(c.http.host).to.equal('127.0.0.2');
      expect(c.smtp.inbound.host).to.equal('127.0.0.2');
      expect(c.smtp.submission).to.include({ host: '127.0.0.2', port: 2601 });
    });

    it("reads POSTHORN_KEY and POSTHORN_API_URL as the CLI's, never as config keys, and says nothing about them", function () {
      const warnings: string[] = [];
      const c = loadConfig({
        path: configFile(''),
        env: { POSTHORN_KEY: 'ph_test_abc', POSTHORN_API_URL: 'http://127.0.0.1:8025' },
        warn: (m) => warnings.push(m),
      });
      expect(c.http.port).to.equal(8025);
      expect(warnings).to.deep.equal([]);
    });

    it("ignores, with a warning naming it, a POSTHORN_* variable that names no config section (a compose file's POSTHORN_PUBLIC_URL)", function () {
      const warnings: string[] = [];
      const c = loadConfig({
        path: configFile(''),
        env: { POSTHORN_PUBLIC_URL: 'https://mail.example.com', POSTHORN_HTTP__PORT: '9100' },
        warn: (m) => warnings.push(m),
      });
      expect(c.http.publicUrl).to.not.equal('https://mail.example.com');
      expect(c.http.port).to.equal(9100);
      expect(warnings).to.have.length(1);
      expect(warnings[0])
        .to.match(/POSTHORN_PUBLIC_URL ignored/)
        .and.match(/POSTHORN_HTTP__PORT/);
    });

    it('names the variable when its value has the wrong type', function () {
      expect(() => loadConfig({ path: configFile(''), env: { POSTHORN_HTTP__PORT: 'abc' } })).to.throw(
        ConfigError,
        /"http\.port".*POSTHORN_HTTP__PORT/,
      );
    });

    it('ignores the variables that are not config keys', function () {
      const c = loadConfig({
        path: configFile(''),
        env: { POSTHORN_CONFIG: '/elsewhere.yaml', POSTHORN_TEST_PG_URL: 'postgres://x' },
      });
      expect(c.http.port).to.equal(8025);
    });

    it('finds the file through POSTHORN_CONFIG when no path is given', function () {
      const path = configFile('http:\n  port: 9200\n');
      expect(loadConfig({ env: { POSTHORN_CONFIG: path } }).http.port).to.equal(9200);
    });
  });

  it('ships a default config file that loads', function () {
    const c = loadConfig({ path: DEFAULT_CONFIG_PATH, env: {} });
    expect(c.http.port).to.equal(8025);
    expect(c.dataDir).to.equal(join(DEFAULT_CONFIG_PATH, '..', '..', 'data'));
  });

  it('says which file is missing', function () {
    expect(() => loadConfig({ path: '/nonexistent/posthorn.yaml', env: {} })).to.throw(
      ConfigError,
      /\/nonexistent\/posthorn\.yaml/,
    );
  });
});
