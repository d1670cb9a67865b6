import type { SMTPServerSession } from 'smtp-server';
import type { InboundService, Target } from '../modules/receiving/inbound/inbound.service.js';
import {
  failureLogger,
  listen,
  readData,
  refusalOf,
  smtpError,
  type Listener,
  type ListenerOptions,
} from './listener.js';
import { withCertificate } from './self-signed-tls.js';

/** Envelope recipients of one transaction on the MX listener. */
const MAX_RECIPIENTS = 100;

/**
 * The MX listener (smtp.inbound): bounces and complaints to the VERP and
 * report addresses, and mail for the projects' verified domains. Every other
 * recipient is refused at RCPT: never an open relay. A message is answered
 * 250 only once it is committed (InboundService.deliver); a failure to store
 * it is a 451 (a full disk 452), so the sender keeps it and tries again, and
 * a message that breaks a parser's limit is refused for good (554).
 */
export async function startMxListener(options: ListenerOptions, inbound: InboundService): Promise<Listener> {
  const o = await withCertificate(options);
  const targets = new WeakMap<SMTPServerSession, Target[]>();
  const logFailure = failureLogger(o);
  return listen(o, {
    authOptional: true,
    disabledCommands: o.tls.key && o.tls.cert ? ['AUTH'] : ['AUTH', 'STARTTLS'],
    onMailFrom(_address, session, cb) {
      targets.set(session, []);
      cb();
    },
    onRcptTo(address, session, cb) {
      const list = targets.get(session) ?? [];
      if (list.length >= MAX_RECIPIENTS) return cb(smtpError(452, '4.5.3 too many recipients in one transaction'));
      inbound.target(address.address).then(
        (t) => {
          if (!t)
            return cb(smtpError(550, `5.7.1 <${address.address}>: relay access denied: not a receiving address here`));
          list.push(t);
          targets.set(session, list);
          cb();
        },
        (e: Error) => {
          o.logger.error({ err: e }, 'inbound RCPT check failed');
          cb(smtpError(451, '4.3.0 temporary failure, try again later'));
        },
      );
    },
    onData(stream, session, cb) {
      readData(stream)
        .then(async (raw) => {
          if (!raw) return cb(smtpError(552, `5.3.4 message larger than ${o.maxBytes} bytes`));
          const list = targets.get(session) ?? [];
          const done = await inbound.deliver(
            session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            list,
            raw,
          );
          o.logger.info(
            {
              kind: done.kind,
              applied: done.applied,
              received: done.received,
              bytes: raw.length,
              ...(done.dmarcReports ? { dmarc: done.dmarcReports } : {}),
            },
            'inbound message stored',
          );
          cb(null, done.received.length ? `2.0.0 received as ${done.received.join(', ')}` : '2.0.0 report accepted');
        })
        .catch((e: unknown) => {
          logFailure(e);
          cb(refusalOf(e) ?? smtpError(451, '4.3.0 the message could not be stored, try again later'));
        });
    },
  });
}
