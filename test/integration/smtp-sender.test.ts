import { expect } from 'chai';
import { SmtpSender } from '../../src/mta/smtp-sender.js';
import { startSink, type SmtpSink } from '../helpers/smtp-sink.js';

describe('SMTP sender: the queue mark before the body', function () {
  this.timeout(20_000);
  let sink: SmtpSink;
  let sender: SmtpSender;
  const dest = () => [{ host: '127.0.0.1', port: sink.port, tls: 'opportunistic' as const }];
  const raw = Buffer.from('From: a@shop.test\r\nTo: b@ok.test\r\nSubject: hi\r\n\r\nbody\r\n');

  before(async function () {
    sink = await startSink();
    sender = new SmtpSender({ hostname: 'mta.test', maxConnectionsPerDestination: 2 });
  });
  after(async function () {
    await sender.close();
    await sink.stop();
  });

  it('asks for the mark as the transaction begins and holds the body until it is recorded', async function () {
    const to = `mark-${Date.now()}@ok.test`;
    let release!: () => void;
    let asked = 0;
    const sent = sender.send(dest(), {
      envelope: { from: 'bounce@shop.test', to: [to] },
      raw,
      beforeData: () => {
        asked++;
        return new Promise<void>((r) => (release = r));
      },
    });
    // the round trips go on while the mark is being committed …
    const deadline = Date.now() + 5000;
    while (sink.rcptAttempts(to) === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    expect(asked).to.equal(1);
    expect(sink.rcptAttempts(to)).to.equal(1);
    // … but no body reaches the server before it is recorded
    await new Promise((r) => setTimeout(r, 200));
    expect(sink.messagesTo(to)).to.have.length(0);
    release();
    const res = await sent;
    expect(res.recipients[0]).to.include({ address: to, kind: 'delivered' });
    expect(res.dataStarted).to.equal(true);
    expect(sink.messagesTo(to)).to.have.length(1);
  });

  it('sends no body when the mark could not be recorded, and the recipient is retried, not ambiguous', async function () {
    const to = `nomark-${Date.now()}@ok.test`;
    const res = await sender.send(dest(), {
      envelope: { from: 'bounce@shop.test', to: [to] },
      raw,
      beforeData: () => Promise.reject(new Error('disk full')),
    });
    expect(res.recipients[0].kind).to.equal('deferred');
    expect(sink.messagesTo(to)).to.have.length(0);
  });

  it('a transaction refused before DATA still settles its mark, and nothing is sent', async function () {
    const to = `nobody-${Date.now()}@reject.test`;
    let settled = false;
    const res = await sender.send(dest(), {
      envelope: { from: 'bounce@shop.test', to: [to] },
      raw,
      beforeData: async () => {
        settled = true;
      },
    });
    expect(res.recipients[0]).to.include({ kind: 'bounced' });
    expect(settled).to.equal(true);
    expect(sink.messagesTo(to)).to.have.length(0);
  });
});
