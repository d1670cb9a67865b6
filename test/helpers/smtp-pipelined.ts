// An SMTP client for the bench and the tests: one connection that pipelines (RFC 2920) as Postfix and other MTAs do:
// MAIL, RCPT and DATA in one write, the message after the 354, the next message after the 250.
// nodemailer waits for each reply and spends more CPU per message than the listener it loads, and on
// a 2-core machine the load and the appliance share the cores.
import { connect, type Socket } from 'node:net';
import { once } from 'node:events';
import { SmtpReplyReader } from './smtp-reply-reader.js';

export class SmtpSession {
  private readonly replies = new SmtpReplyReader();
  /** the reply to EHLO, every line */
  ehlo = '';

  private constructor(private readonly socket: Socket) {
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => this.replies.push(chunk));
  }

  static async open(port: number, auth?: { user: string; pass: string }): Promise<SmtpSession> {
    const socket = connect({ host: '127.0.0.1', port });
    await once(socket, 'connect');
    socket.setNoDelay(true);
    const session = new SmtpSession(socket);
    await session.expect('220', session.reply());
    session.ehlo = await session.command('EHLO bench.posthorn.test');
    if (!session.ehlo.startsWith('250')) throw new Error(`SMTP: EHLO refused: ${session.ehlo}`);
    if (auth)
      await session.expect(
        '235',
        session.command(`AUTH PLAIN ${Buffer.from(`\0${auth.user}\0${auth.pass}`).toString('base64')}`),
      );
    return session;
  }

  /** Sends one message; resolves to the reply that ended it (250 when it was accepted). */
  async send(from: string, to: string[], raw: string): Promise<string> {
    const got = await this.commands([`MAIL FROM:<${from}>`, ...to.map((t) => `RCPT TO:<${t}>`), 'DATA']);
    const data = got[got.length - 1];
    if (!data.startsWith('354')) {
      await this.command('RSET');
      return got.find((r) => !r.startsWith('2')) ?? data;
    }
    return this.data(raw);
  }

  /** Commands in one write (RFC 2920); resolves to their replies, in order. */
  commands(lines: string[]): Promise<string[]> {
    const answers = lines.map(() => this.reply());
    this.socket.write(lines.map((line) => `${line}\r\n`).join(''));
    return Promise.all(answers);
  }

  /** The message after a 354, dot-stuffed, and the reply to its end. */
  data(raw: string): Promise<string> {
    const body = raw.replace(/\r?\n/g, '\r\n').replace(/^\./gm, '..');
    const end = this.reply();
    this.socket.write(`${body}${body.endsWith('\r\n') ? '' : '\r\n'}.\r\n`);
    return end;
  }

  async close(): Promise<void> {
    await this.command('QUIT').catch(() => undefined);
    this.socket.destroy();
  }

  private command(line: string): Promise<string> {
    const answer = this.reply();
    this.socket.write(`${line}\r\n`);
    return answer;
  }

  private reply(): Promise<string> {
    return this.replies.next();
  }

  private async expect(code: string, reply: Promise<string>): Promise<void> {
    const got = await reply;
    if (!got.startsWith(code)) throw new Error(`SMTP: expected ${code}, got ${got}`);
  }
}
