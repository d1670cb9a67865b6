import { expect } from 'chai';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../helpers/process.js';
import { autoReply, deliveryStatus } from '../fixtures/report-builders.js';

describe('posthorn inbound parse (issue 21)', function () {
  this.timeout(30_000);
  const dir = mkdtempSync(join(tmpdir(), 'posthorn-parse-'));
  const original =
    'From: a@shop.test\r\nTo: gone@isp.test\r\nMessage-ID: <abc123@mta.shop.test>\r\nSubject: x\r\n\r\nbody\r\n';

  it('prints what it reads from a bounce as JSON, storing nothing (no config, no database)', async function () {
    const file = join(dir, 'dsn.eml');
    writeFileSync(
      file,
      deliveryStatus({
        to: 'bounce+x@mta.shop.test',
        recipient: 'gone@isp.test',
        status: '5.1.1',
        diagnostic: 'smtp; 550 5.1.1 <gone@isp.test>: Recipient address rejected: User unknown',
        original,
      }),
    );
    const r = await runCli(['inbound', 'parse', file, '--json']);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.json).to.deep.include({
      kind: 'bounce',
      original_message_id: '<abc123@mta.shop.test>',
      reporting_mta: 'mx.isp.test',
    });
    expect((r.json as { recipients: unknown[] }).recipients).to.deep.equal([
      {
        address: 'gone@isp.test',
        action: 'failed',
        status: '5.1.1',
        bounce_type: 'Permanent',
        reason: 'user_unknown',
        diagnostic: '550 5.1.1 <gone@isp.test>: Recipient address rejected: User unknown',
      },
    ]);
  });

  it('reads an out-of-office reply as an auto-reply, and a table without --json', async function () {
    const file = join(dir, 'ooo.eml');
    writeFileSync(file, autoReply({ from: 'ann@isp.test', to: 'bounce+x@mta.shop.test' }));
    const r = await runCli(['inbound', 'parse', file]);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.match(/kind\s+auto_reply/);
  });

  it('names the file it cannot read, on stderr with a non-zero exit', async function () {
    const r = await runCli(['inbound', 'parse', join(dir, 'missing.eml'), '--json']);
    expect(r.code).to.not.equal(0);
    expect(r.stderr).to.include('missing.eml');
  });
});
