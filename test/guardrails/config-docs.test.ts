import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { configDoc } from '../../src/config/docs.js';
import { PACKAGE_ROOT } from '../../src/config/package-root.js';
import { withReasonsTable } from '../../src/modules/receiving/bounces/reasons-table.js';
import { BOUNCE_REASONS, isHard } from '../../src/modules/receiving/bounces/reasons.js';

describe('config documentation', function () {
  it('docs/CONFIG.md is what the schema generates (run npm run docs)', function () {
    expect(readFileSync(join(PACKAGE_ROOT, 'docs', 'CONFIG.md'), 'utf8')).to.equal(configDoc());
  });

  it("docs/bounces.md's reason table is reasons.ts's, every reason with its hard/soft verdict (run npm run docs)", function () {
    const doc = readFileSync(join(PACKAGE_ROOT, 'docs', 'bounces.md'), 'utf8');
    expect(doc).to.equal(withReasonsTable(doc));
    // each reason's row says hard only for the four that mean the address is gone
    for (const r of BOUNCE_REASONS)
      expect(doc, r).to.match(
        new RegExp(`\\| \`${r}\` \\| [^|]+ \\| ${isHard(r) ? 'hard \\| yes' : 'soft \\| (no|if the project says so)'}`),
      );
    expect(BOUNCE_REASONS.filter(isHard)).to.deep.equal(['user_unknown', 'host_unknown', 'has_moved', 'not_accept']);
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
