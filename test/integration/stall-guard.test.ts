import { expect } from 'chai';
import { createSocket } from 'node:dgram';
import { randomBytes } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import dns2 from 'dns2';
import { client, type Client } from '../helpers/http.js';
import { p99, probeLatency, type Latencies } from '../helpers/latency-probe.js';
import { RawSmtp } from '../helpers/smtp-raw.js';
import { startServe, writeConfig, type ServeProcess } from '../helpers/process.js';
import { smtpSend } from '../helpers/smtp-client.js';

// Issue 38: one stranger must not freeze the appliance. `posthorn serve` runs
// as a process of its own; each hostile input of the probe that found the
// stalls is sent to the real listeners (DNS over UDP, SMTP over TCP, HTTP)
// while /healthz and the MX greeting are timed from another client address.
// On the 2-core machine the attack, the appliance and the probes share the
// cores: a run whose p99 is over 100 ms beyond the machine's own at that
// moment is run again, up to RUNS times. The probes run on a
// thread of their own, so that the test's own work does not delay them.

const LIMIT_MS = 100;
// A stall (a parse on the listener's thread) shows in every run; a busy CI machine (the other
// worker's tests on the same two cores) delays a run now and then: 2 of 3 CI runs on one slow day
// had all three runs of the nested-HTML attack over the limit (an MX greeting 124–127 ms late), and
// the test alone passed 3 of 3 times.
const RUNS = 5;
/**
 * smtp-server holds every greeting 100 ms on purpose, to catch clients that
 * talk before it (as Postfix's postscreen does): the greeting's limit is
 * that pause plus LIMIT_MS.
 */
const GREETING_PAUSE_MS = 100;
const HOST = 'mx.stall.test';

describe('No stranger can stall the appliance (issue 38: hostile input while /healthz and the MX greeting are timed)', function () {
  this.timeout(600_000);
  let serve: ServeProcess;
  let api: Client;
  let mxPort: number;
  let submissionPort: number;
  let dnsPort: number;
  let key: string;
  let rua: string;

  before(async function () {
    const { path } = writeConfig({
      outbound: { hostname: HOST },
      dns: { zone: 'dkim.stall.test', server: { enabled: true, host: '127.0.0.1', port: 0 } },
      smtp: { inbound: { host: '127.0.0.1', port: 0 }, submission: { host: '127.0.0.1', port: 0 }, max_clients: 200 },
      limits: { requests_per_second: 10_000 },
    });
    serve = await startServe(path, {}, 30_000);
    const out = serve.output();
    key = /ph_test_[A-Za-z0-9]{40}/.exec(out)![0];
    api = client(serve.baseUrl, key);
    const ports = await waitForPorts(serve);
    ({ mxPort, submissionPort, dnsPort } = ports);
    const d = await api.post('/v1/domains', { name: 'stall.example' });
    expect(d.status).to.equal(201);
    const record = (d.body.records as Array<{ name: string; value: string }>).find(
      (r) => r.name === '_dmarc.stall.example',
    )!;
    // the report address at outbound.hostname takes the domain's reports before the domain is verified
    rua = `${/rua=mailto:(dmarc\+[0-9a-f]{20})@/.exec(record.value)![1]}@${HOST}`;
  });

  after(async function () {
    await serve?.stop();
  });

  /** The worse of the two probes' p99 in a run, the greeting's own pause taken off. */
  const worstOf = (l: Latencies) => Math.max(p99(l.healthz), p99(l.greeting) - GREETING_PAUSE_MS);

  /**
   * Runs the attack (up to RUNS times) while probing; resolves with the run that kept both p99s within
   * LIMIT_MS of what the same probes measured just before it with no attack (the machine's own delay at
   * that moment: a slow CI machine with the other workers' tests on its two cores answered /healthz in
   * over 100 ms with nothing attacking), or fails with the best.
   */
  async function underAttack(attack: () => Promise<void>): Promise<Latencies> {
    let best: { got: Latencies; over: number; idle: number } | null = null;
    for (let run = 0; run < RUNS; run++) {
      const quiet = await probeLatency(serve.baseUrl, mxPort);
      await new Promise((r) => setTimeout(r, 1000));
      const idle = worstOf(await quiet.stop());
      const probe = await probeLatency(serve.baseUrl, mxPort);
      await attack();
      const got = await probe.stop();
      const over = worstOf(got) - Math.max(0, idle);
      if (over <= LIMIT_MS) return got;
      if (!best || over < best.over) best = { got, over, idle };
    }
    const b = best!;
    expect.fail(
      `p99 over ${LIMIT_MS} ms beyond the machine's own (${b.idle.toFixed(0)} ms with no attack) in each of ${RUNS} runs: /healthz ${p99(b.got.healthz).toFixed(0)} ms (${b.got.healthz.length} samples), MX greeting ${p99(b.got.greeting).toFixed(0)} ms beside its ${GREETING_PAUSE_MS} ms pause (${b.got.greeting.length})`,
    );
  }

  it('DNS: packets whose header claims 65,535 records per section, and 200 random packets, are dropped; a real query is still answered', async function () {
    const udp = createSocket('udp4');
    try {
      await underAttack(async () => {
        const lying = Buffer.from([0x12, 0x34, 0x01, 0x00, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00]);
        for (let i = 0; i < 5; i++) udp.send(lying, dnsPort, '127.0.0.1');
        for (let i = 0; i < 200; i++) udp.send(randomBytes(12 + Math.floor(Math.random() * 500)), dnsPort, '127.0.0.1');
        await new Promise((r) => setTimeout(r, 1500));
      });
      const answer = await dnsQuery(dnsPort, 'dkim.stall.test');
      expect(answer.header.rcode).to.equal(0);
      expect(answer.answers.length).to.be.greaterThan(0);
    } finally {
      udp.close();
    }
  });

  it('templates and broadcasts: 1 MB of HTML nested 200,000 deep is refused naming html, quickly', async function () {
    const html = '<div>'.repeat(199_999);
    const aud = await api.post('/v1/audiences', { name: 'Stall' });
    let template: { status: number; body: any } | null = null;
    let broadcast: { status: number; body: any } | null = null;
    await underAttack(async () => {
      template = await api.post('/v1/templates', { id: 'nested', subject: 'Hi', html });
      broadcast = await api.post('/v1/broadcasts', {
        name: 'Nested',
        from: 'news@stall.example',
        audience_id: aud.body.id,
        subject: 'Hi',
        html,
      });
      // the probes need samples while it is read
      await new Promise((r) => setTimeout(r, 1000));
    });
    expect(template!.status).to.equal(400);
    expect(template!.body.error).to.include({ code: 'validation_error', field: 'html' });
    expect(template!.body.error.message).to.match(/nest more than 256 deep/);
    expect(broadcast!.status).to.equal(400);
    expect(broadcast!.body.error).to.include({ code: 'validation_error', field: 'html' });
  });

  it('DMARC: a valid gzip report that inflates to ~19 MB mailed to the rua address is read off the main thread', async function () {
    const gz = gzipSync(bigAggregateReport('stall.example', 19_000_000), { level: 9 });
    const raw = reportMessage(rua, gz);
    let answer: Awaited<ReturnType<typeof smtpSend>> | null = null;
    await underAttack(async () => {
      answer = await smtpSend(mxPort, { from: 'noreply-dmarc-support@google.com', to: [rua], raw });
    });
    // read within parsing.time_budget and memory_mb it is stored (250); past them it is refused for good (554): never a 4xx
    const a = answer!;
    if (a.ok) expect(a.response).to.match(/^250/);
    else expect(a.code).to.equal(554);
  });

  it('SMTP: messages with 20,000 headers, 2,000-deep multipart or 5,000 parts are refused for good (554), not deferred', async function () {
    const replies: Array<Awaited<ReturnType<typeof smtpSend>>> = [];
    await underAttack(async () => {
      replies.length = 0;
      for (const raw of [manyHeaders(20_000), deepMultipart(2_000), manyParts(5_000)])
        replies.push(await smtpSend(mxPort, { from: 'x@stranger.example', to: [rua], raw }));
    });
    for (const r of replies) {
      expect(r.ok).to.equal(false);
      expect(r.ok === false && r.code).to.equal(554);
    }
    expect(serve.output()).not.to.match(/"level":50[^\n]*Max (header size|allowed child)/);
  });

  it('SMTP: 200 connections dripping DATA from one address leave room for a real sender from another', async function () {
    const held: RawSmtp[] = [];
    let real: Awaited<ReturnType<typeof smtpSend>> | null = null;
    try {
      await underAttack(async () => {
        // a run repeated (its probes too slow) starts from no connections held
        held.splice(0).forEach((s) => s.destroy());
        for (let i = 0; i < 200; i++) {
          const s = await RawSmtp.open(mxPort).catch(() => null);
          if (!s) continue;
          held.push(s);
          void (async () => {
            if (!s.greeting.startsWith('220')) return;
            for (const line of ['EHLO drip.example', 'MAIL FROM:<d@drip.example>', `RCPT TO:<${rua}>`, 'DATA'])
              if (!/^[23]/.test(await s.command(line))) return;
            s.write('S');
          })().catch(() => undefined);
        }
        await new Promise((r) => setTimeout(r, 1500));
        real = await smtpSend(mxPort, {
          from: 'r@real.example',
          to: [rua],
          raw: reportMessage(rua, gzipSync(bigAggregateReport('stall.example', 2_000))),
          localAddress: '127.0.0.3',
        });
      });
      expect(real!.ok, JSON.stringify(real)).to.equal(true);
      // the address that opened them holds at most smtp.max_clients_per_ip (20) of them
      await new Promise((r) => setTimeout(r, 500));
      expect(held.filter((s) => !s.ended).length).to.be.at.most(20);
    } finally {
      held.forEach((s) => s.destroy());
    }
  });

  it('SMTP: a session that keeps sending refused RCPTs is closed with 421 after smtp.hard_error_limit', async function () {
    let refused = 0;
    let last = '';
    let closedByServer = false;
    await underAttack(async () => {
      // a run repeated (its probes too slow) counts afresh
      refused = 0;
      last = '';
      const s = await RawSmtp.open(mxPort, { localAddress: '127.0.0.4' });
      await s.command('EHLO rcpt.example');
      await s.command('MAIL FROM:<a@rcpt.example>');
      for (let i = 0; i < 3000 && !s.ended; i++) {
        last = await s.command(`RCPT TO:<nobody${i}@elsewhere.example>`);
        if (last.startsWith('550')) refused++;
        else break;
      }
      await Promise.race([s.closed, new Promise((r) => setTimeout(r, 5000))]);
      closedByServer = s.ended;
      s.destroy();
    });
    expect(refused).to.be.at.most(20);
    expect(last).to.match(/^421/);
    expect(closedByServer).to.equal(true);
  });

  it('SMTP AUTH: wrong keys are answered slowly, the session closes after 3, and the address is then refused', async function () {
    const bad = Buffer.from(`\0x\0ph_live_${'x'.repeat(40)}`).toString('base64');
    const answers: string[] = [];
    let perSession = 0;
    await underAttack(async () => {
      answers.length = 0;
      perSession = 0;
      for (let session = 0; session < 6 && !answers.some((a) => a.startsWith('454')); session++) {
        const s = await RawSmtp.open(submissionPort, { localAddress: '127.0.0.5' });
        await s.command('EHLO guess.example');
        let n = 0;
        while (!s.ended) {
          const a = await s.command(`AUTH PLAIN ${bad}`);
          if (a === '') break;
          answers.push(a);
          if (a.startsWith('535')) n++;
          if (!a.startsWith('535')) break;
        }
        perSession = Math.max(perSession, n);
        s.destroy();
      }
    });
    expect(perSession).to.be.at.most(3);
    expect(answers.some((a) => a.startsWith('454'))).to.equal(true, answers.join(' | '));
  });
});

async function waitForPorts(serve: ServeProcess): Promise<{ mxPort: number; submissionPort: number; dnsPort: number }> {
  for (let i = 0; i < 100; i++) {
    const out = serve.output();
    const mx = /"listener":"inbound"[^\n]*"port":(\d+)/.exec(out)?.[1];
    const sub = /"listener":"submission"[^\n]*"port":(\d+)/.exec(out)?.[1];
    const dns =
      /"port":(\d+),"msg":"DKIM zone DNS server listening"/.exec(out)?.[1] ??
      /"msg":"DKIM zone DNS server listening"[^\n]*"port":(\d+)/.exec(out)?.[1];
    if (mx && sub && dns) return { mxPort: Number(mx), submissionPort: Number(sub), dnsPort: Number(dns) };
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`ports not found in the log:\n${serve.output()}`);
}

function dnsQuery(port: number, name: string): Promise<{ header: { rcode: number }; answers: unknown[] }> {
  const { Packet } = dns2;
  const q = new Packet();
  q.header.id = 4242;
  q.questions.push({ name, type: Packet.TYPE.SOA, class: Packet.CLASS.IN } as never);
  const udp = createSocket('udp4');
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      udp.close();
      reject(new Error('no DNS answer in 2 s'));
    }, 2000);
    udp.on('message', (msg) => {
      clearTimeout(timer);
      udp.close();
      resolve(Packet.parse(msg));
    });
    udp.send(q.toBuffer(), port, '127.0.0.1');
  });
}

/** An aggregate report (RFC 7489 appendix C) of about `bytes` of XML, one row per source IP. */
function bigAggregateReport(domain: string, bytes: number): Buffer {
  const head = `<?xml version="1.0" encoding="UTF-8"?>\n<feedback><report_metadata><org_name>google.com</org_name><email>noreply-dmarc-support@google.com</email><report_id>${Date.now()}${Math.random()}</report_id><date_range><begin>1700000000</begin><end>1700086399</end></date_range></report_metadata><policy_published><domain>${domain}</domain><adkim>r</adkim><aspf>r</aspf><p>none</p><sp>none</sp><pct>100</pct></policy_published>\n`;
  const rows: string[] = [head];
  let size = head.length;
  for (let i = 0; size < bytes; i++) {
    const row = `<record><row><source_ip>10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}</source_ip><count>${(i % 97) + 1}</count><policy_evaluated><disposition>none</disposition><dkim>pass</dkim><spf>pass</spf></policy_evaluated></row><identifiers><header_from>${domain}</header_from></identifiers><auth_results><dkim><domain>${domain}</domain><result>pass</result><selector>s${i % 13}</selector></dkim><spf><domain>${domain}</domain><result>pass</result></spf></auth_results></record>\n`;
    rows.push(row);
    size += row.length;
  }
  rows.push('</feedback>\n');
  return Buffer.from(rows.join(''));
}

function reportMessage(to: string, gz: Buffer): string {
  const b64 = gz.toString('base64').replace(/.{76}/g, '$&\r\n');
  return [
    'From: noreply-dmarc-support@google.com',
    `To: ${to}`,
    'Subject: Report domain: stall.example Submitter: google.com',
    'MIME-Version: 1.0',
    'Content-Type: multipart/mixed; boundary="r"',
    '',
    '--r',
    'Content-Type: application/gzip; name="google.com!stall.example!1700000000!1700086399.xml.gz"',
    'Content-Transfer-Encoding: base64',
    'Content-Disposition: attachment; filename="google.com!stall.example!1700000000!1700086399.xml.gz"',
    '',
    b64,
    '--r--',
    '',
  ].join('\r\n');
}

function manyHeaders(n: number): string {
  return `From: a@stranger.example\r\nTo: b@stranger.example\r\nSubject: headers\r\n${Array.from({ length: n }, (_, i) => `X-H${i}: v`).join('\r\n')}\r\n\r\nbody\r\n`;
}

function deepMultipart(depth: number): string {
  let head = 'From: a@stranger.example\r\nTo: b@stranger.example\r\nSubject: deep\r\nMIME-Version: 1.0\r\n';
  let tail = '';
  for (let i = 0; i < depth; i++) {
    head += `Content-Type: multipart/mixed; boundary="b${i}"\r\n\r\n--b${i}\r\n`;
    tail = `\r\n--b${i}--\r\n${tail}`;
  }
  return `${head}Content-Type: text/plain\r\n\r\nhi${tail}`;
}

function manyParts(n: number): string {
  let m =
    'From: a@stranger.example\r\nTo: b@stranger.example\r\nSubject: parts\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary="zz"\r\n\r\n';
  for (let i = 0; i < n; i++) m += `--zz\r\nContent-Type: text/plain\r\n\r\npart ${i}\r\n`;
  return `${m}--zz--\r\n`;
}
