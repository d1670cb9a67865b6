import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { configDoc } from '../../src/config/docs.js';
import { PACKAGE_ROOT } from '../../src/config/package-root.js';

describe('config documentation', function () {
  it('docs/CONFIG.md is what the schema generates (run npm run docs)', function () {
    expect(readFileSync(join(PACKAGE_ROOT, 'docs', 'CONFIG.md'), 'utf8')).to.equal(configDoc());
  });

  it('lists every key of CONTRACT §2', function () {
    const doc = configDoc();
    const keys = [
      'data_dir',
      'database.client',
      'database.url',
      'http.host',
      'http.port',
      'http.public_url',
      'smtp.inbound.enabled',
      'smtp.inbound.host',
      'smtp.inbound.port',
      'smtp.submission.enabled',
      'smtp.submission.host',
      'smtp.submission.port',
      'smtp.tls.key',
      'smtp.tls.cert',
      'outbound.hostname',
      'outbound.mode',
      'outbound.mx_port',
      'outbound.relay.host',
      'outbound.relay.port',
      'outbound.relay.secure',
      'outbound.relay.user',
      'outbound.relay.pass',
      'outbound.retry_schedule',
      'outbound.max_connections_per_domain',
      'dns.resolvers',
      'dns.zone',
      'dns.server.enabled',
      'dns.server.host',
      'dns.server.port',
      'test_domain',
      'webhooks.timeout_ms',
      'webhooks.retry_schedule',
      'webhooks.ca_file',
      'network.allow_private',
      'limits.requests_per_second',
      'limits.idempotency_ttl',
      'jobs.domain_recheck',
    ];
    for (const k of keys) expect(doc, k).to.include(`| \`${k}\` |`);
  });
});
