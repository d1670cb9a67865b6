import { expect } from 'chai';
import { pino } from 'pino';
import { apiError } from '../../src/lib/errors.js';
import { InputRefused } from '../../src/lib/input-refused.js';
import { smtpDrops } from '../../src/log/metrics.js';
import type { InboundService, Target } from '../../src/modules/receiving/inbound/inbound.service.js';
import type { Listener } from '../../src/smtp/listener.js';
import { startMxListener } from '../../src/smtp/mx-listener.js';
import { replyOf } from '../../src/smtp/submission.js';
import { plainMessage } from '../fixtures/report-builders.js';
import { startLiveWorld, type LiveWorld } from '../helpers/live.js';
import { smtpSend } from '../helpers/smtp-client.js';
import { counterValue, listenerOptionsFor, RawSmtp } from '../helpers/smtp-raw.js';
import { waitFor } from '../helpers/wait.js';

const HOST = 'mta.limits.test';
const report = (subject: string) => plainMessage({ from: 'mailer-daemon@isp.test', to: `postmaster@${HOST}`, subject });
const drops = (listener: string, limit: string) => counterValue(smtpDrops, { listener, limit });

/** A session that has said EHLO and opened a transaction for postmaster@ (a receiving address), DATA sent and 354 read. */
async function inData(port: number): Promise<RawSmtp> {
  const s = await RawSmtp.open(port);
  const replies = await s.commands(['EHLO client.test', 'MAIL FROM:<>', `RCPT TO:<postmaster@${HOST}>`, 'DATA']);
  expect(replies.map((r) => r.slice(0, 3))).to.deep.equal(['250', '250', '250', '354']);
  return s;
}

/** Writes one byte every `everyMs` until the listener closes the connection; resolves to the reply it sent and the time it took. */
async function drip(s: RawSmtp, everyMs: number): Promise<{ reply: string; ms: number }> {
  const t0 = Date.now();
  const timer = setInterval(() => s.write('x'), everyMs);
  try {
    const reply = await s.reply();
    await s.closed;
    return { reply, ms: Date.now() - t0 };
  } finally {
    clearInterval(timer);
  }
}

describe('SMTP session limits (issue 38): smtp.max_clients_per_ip, session_timeout, data_timeout, min_data_rate, hard_error_limit', function () {
  this.timeout(30_000);
  let w: LiveWorld;
  let port: number;

  before(async function () {
    w = await startLiveWorld(
      'dkim.limits.test',
      HOST,
      {
        smtp: {
          max_clients: 5,
          max_clients_per_ip: 2,
          session_timeout: '3s',
          data_timeout: '1s',
          inbound: { host: '127.0.0.1', port: 0 },
          submission: { enabled: false },
        },
      },
      { inbound: true },
    );
    port = w.api.running.inboundPort!;
  });
  after(async function () {
    await w.stop();
  });

  context('when one client address holds smtp.max_clients_per_ip connections', function () {
    it('answers its next one 421 4.7.0 and closes it, while another address is still greeted; a slot given back is taken again', async function () {
      const before = await drops('inbound', 'clients_per_ip');
      const first = await RawSmtp.open(port);
      const second = await RawSmtp.open(port);
      expect([first.greeting, second.greeting].map((g) => g.slice(0, 3))).to.deep.equal(['220', '220']);
      const third = await RawSmtp.open(port);
      expect(third.greeting).to.equal('421 4.7.0 too many connections from your address');
      await third.closed;
      const other = await RawSmtp.open(port, { localAddress: '127.0.0.2' });
      expect(other.greeting).to.match(/^220 /);
      expect(await drops('inbound', 'clients_per_ip')).to.equal(before + 1);
      await first.command('QUIT');
      await first.closed;
      const again = await waitFor(
        async () => {
          const s = await RawSmtp.open(port);
          if (s.greeting.startsWith('220')) return s;
          s.destroy();
          return null;
        },
        5000,
        'a greeting once a connection of 127.0.0.1 closed',
      );
      for (const s of [second, other, again]) s.destroy();
    });
  });

  context('when a session lasts longer than smtp.session_timeout', function () {
    it('is told 421 4.4.2 and closed, however busy it keeps the connection', async function () {
      const t0 = Date.now();
      const s = await RawSmtp.open(port);
      await s.command('EHLO client.test');
      const noop = setInterval(() => s.write('NOOP\r\n'), 200);
      try {
        await s.closed;
      } finally {
        clearInterval(noop);
      }
      expect(Date.now() - t0).to.be.at.least(3000);
      const text = await replyText(s);
      expect(text).to.match(/^421 4\.4\.2 session open longer than 3 s, closing connection$/m);
    });
  });

  context('when a DATA transfer outlasts smtp.data_timeout', function () {
    it('is told 421 4.4.2 and closed, and a real sender is served after it', async function () {
      const before = await drops('inbound', 'data_timeout');
      const s = await inData(port);
      const { reply, ms } = await drip(s, 100);
      expect(reply).to.equal('421 4.4.2 the message took longer than 1 s, closing connection');
      expect(ms).to.be.at.least(500);
      expect(await drops('inbound', 'data_timeout')).to.equal(before + 1);
      const sent = await smtpSend(port, { from: '', to: [`postmaster@${HOST}`], raw: report('after the drip') });
      expect(sent.ok, JSON.stringify(sent)).to.equal(true);
    });
  });

  context('when a session makes more errors than smtp.hard_error_limit (20)', function () {
    it('answers the 21st refused RCPT 421 4.7.0 and closes the connection', async function () {
      const before = await drops('inbound', 'hard_error_limit');
      const s = await RawSmtp.open(port);
      const rcpts = Array.from({ length: 21 }, (_, i) => `RCPT TO:<nobody${i}@elsewhere.test>`);
      const replies = await s.commands(['EHLO client.test', 'MAIL FROM:<a@sender.test>', ...rcpts]);
      const refusals = replies.slice(2);
      expect(refusals.slice(0, 20).every((r) => r.startsWith('550 5.7.1'))).to.equal(true);
      expect(refusals[20]).to.equal('421 4.7.0 too many errors, closing connection');
      await s.closed;
      expect(await drops('inbound', 'hard_error_limit')).to.equal(before + 1);
    });

    it('counts unknown commands and bad syntax or sequence with the refused recipients', async function () {
      const s = await RawSmtp.open(port);
      // 5 unknown (smtp-server itself closes at its 10th), 5 bad syntax, 1 out of sequence, 8 refused, 1 bad address: 20
      const bad = ['FOO', 'BAR', 'BAZ', 'QUX', 'QUUX', 'VRFY', 'HELO', 'EHLO', 'MAIL FROM:<', 'MAIL FROM:<a@b'];
      const replies = await s.commands([
        'EHLO client.test',
        ...bad,
        'RCPT TO:<a@elsewhere.test>',
        'MAIL FROM:<a@sender.test>',
        ...Array.from({ length: 8 }, (_, i) => `RCPT TO:<n${i}@elsewhere.test>`),
        'RCPT TO:<bad',
        'FROB',
      ]);
      const codes = replies.map((r) => Number(r.slice(0, 3)));
      expect(codes.filter((c) => c >= 500 && c <= 504)).to.have.length(12);
      expect(codes.filter((c) => c === 550)).to.have.length(8);
      expect(replies[replies.length - 1]).to.equal('421 4.7.0 too many errors, closing connection');
      await s.closed;
    });

    it('starts the count again after a message is taken', async function () {
      const s = await RawSmtp.open(port);
      await s.command('EHLO client.test');
      const refused = (n: number) => Array.from({ length: n }, (_, i) => `RCPT TO:<x${i}@elsewhere.test>`);
      const first = await s.commands(['MAIL FROM:<>', ...refused(15), `RCPT TO:<postmaster@${HOST}>`, 'DATA']);
      expect(first[first.length - 1]).to.match(/^354/);
      s.write(`${report('between errors').replace(/\r?\n/g, '\r\n')}\r\n.\r\n`);
      expect(await s.reply()).to.match(/^250 /);
      // 15 before the message and 20 after it are refused one by one: the 21st after it is one too many
      const second = await s.commands(['MAIL FROM:<>', ...refused(21)]);
      expect(second.slice(1, 21).every((r) => r.startsWith('550'))).to.equal(true);
      expect(second[21]).to.equal('421 4.7.0 too many errors, closing connection');
      await s.closed;
    });
  });

  context('when a DATA transfer is slower than smtp.min_data_rate once it has run its grace time', function () {
    let mx: Listener;
    before(async function () {
      mx = await startMxListener(
        listenerOptionsFor({ hostname: HOST, limits: { minDataRate: 1000 }, minRateGraceMs: 300 }),
        w.api.core.services.inbound,
      );
    });
    after(async function () {
      await mx.close();
    });

    it('is told 421 4.4.2 and closed, and a real sender is served after it', async function () {
      const before = await drops('inbound', 'min_data_rate');
      const s = await inData(mx.port);
      // 10 bytes a second, against 1000
      const { reply, ms } = await drip(s, 100);
      expect(reply).to.equal('421 4.4.2 the message arrives slower than 1000 bytes a second, closing connection');
      expect(ms).to.be.at.least(150);
      expect(await drops('inbound', 'min_data_rate')).to.equal(before + 1);
      const sent = await smtpSend(mx.port, { from: '', to: [`postmaster@${HOST}`], raw: report('after the slow one') });
      expect(sent.ok, JSON.stringify(sent)).to.equal(true);
    });
  });
});

describe('messages the listeners cannot take (issue 38): a parser limit is 554, a full disk 452', function () {
  this.timeout(20_000);
  const lines: Array<Record<string, unknown>> = [];
  const logger = pino(
    { level: 'info' },
    { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) },
  );
  let failure: () => Error;
  let mx: Listener;

  before(async function () {
    const inbound = {
      target: async (address: string): Promise<Target> => ({
        kind: 'report',
        address,
        emailId: null,
        recipientId: null,
      }),
      deliver: async () => {
        throw failure();
      },
    } as unknown as InboundService;
    mx = await startMxListener(listenerOptionsFor({ hostname: HOST, logger }), inbound);
  });
  after(async function () {
    await mx.close();
  });
  beforeEach(function () {
    lines.length = 0;
  });

  const send = () => smtpSend(mx.port, { from: '', to: [`postmaster@${HOST}`], raw: report('x') });

  it('answers a message that breaks a parser limit 554 5.6.0 with the limit, and logs it once at warn without a stack', async function () {
    failure = () => new InputRefused('mime_parts', 'the message has more than 500 MIME parts');
    const r = await send();
    expect(r.ok).to.equal(false);
    if (!r.ok) expect([r.code, r.response]).to.deep.equal([554, '554 5.6.0 the message has more than 500 MIME parts']);
    const warned = lines.filter((l) => l.level === 40);
    expect(warned).to.have.length(1);
    expect(warned[0]).to.include({ limit: 'mime_parts', listener: 'inbound' });
    expect(JSON.stringify(warned[0])).to.not.include('stack');
  });

  it('answers each message 452 4.3.1 while the disk is full, and logs it at error once a minute, not per message', async function () {
    failure = () => Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' });
    for (let i = 0; i < 3; i++) {
      const r = await send();
      expect(r.ok).to.equal(false);
      if (!r.ok)
        expect([r.code, r.response]).to.deep.equal([452, '452 4.3.1 insufficient system storage, try again later']);
    }
    failure = () => apiError('storage_full', 'the disk is full');
    const r = await send();
    expect(r.ok).to.equal(false);
    if (!r.ok) expect(r.code).to.equal(452);
    expect(lines.filter((l) => l.level === 50)).to.have.length(1);
  });

  it('on submission too: the same errors are the same replies', function () {
    const refused = replyOf(new InputRefused('mime_depth', 'the message nests deeper than 20 parts')) as Error & {
      responseCode: number;
    };
    expect([refused.responseCode, refused.message]).to.deep.equal([
      554,
      '5.6.0 the message nests deeper than 20 parts',
    ]);
    const full = replyOf(Object.assign(new Error('No space left on device'), { code: 'ENOSPC' })) as Error & {
      responseCode: number;
    };
    expect([full.responseCode, full.message]).to.deep.equal([
      452,
      '4.3.1 insufficient system storage, try again later',
    ]);
    expect(
      (replyOf(apiError('storage_full', 'the disk is full')) as Error & { responseCode: number }).responseCode,
    ).to.equal(452);
  });
});

/** Every reply the listener wrote, whole (the last one is the 421 that closed the session). */
async function replyText(s: RawSmtp): Promise<string> {
  const all: string[] = [];
  for (let r = await s.reply(); r; r = await s.reply()) all.push(r);
  return all.join('\n');
}
