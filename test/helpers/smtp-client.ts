import nodemailer from 'nodemailer';

/** ok: the message was taken for the recipients not in `rejected` (each with the reply that refused it). */
export type SmtpAnswer =
  | { ok: true; response: string; rejected: Array<{ address: string; code: number; response: string }> }
  | { ok: false; code: number; response: string; command: string };

/**
 * One message over SMTP to a listener of the appliance on loopback, with
 * nodemailer as the client a real application would use. `from: ''` sends
 * the null reverse-path of bounces (MAIL FROM:<>).
 */
export async function smtpSend(
  port: number,
  m: {
    from: string;
    to: string[];
    raw: string | Buffer;
    auth?: { user: string; pass: string };
    requireTls?: { ca: string };
    localAddress?: string;
  },
): Promise<SmtpAnswer> {
  // plain text unless the test asks for STARTTLS, which then must be offered and must succeed
  const tls = m.requireTls ? { requireTLS: true, tls: { ca: m.requireTls.ca } } : { ignoreTLS: true };
  const transport = nodemailer.createTransport({
    host: '127.0.0.1',
    port,
    secure: false,
    ...tls,
    ...(m.auth ? { auth: m.auth } : {}),
    ...(m.localAddress ? { localAddress: m.localAddress } : {}),
    logger: false,
  });
  try {
    const info = await transport.sendMail({ envelope: { from: m.from, to: m.to }, raw: m.raw });
    const errors =
      (info as { rejectedErrors?: Array<{ recipient?: string; responseCode?: number; response?: string }> })
        .rejectedErrors ?? [];
    return {
      ok: true,
      response: info.response,
      rejected: errors.map((e) => ({
        address: e.recipient ?? '',
        code: e.responseCode ?? 0,
        response: e.response ?? '',
      })),
    };
  } catch (e) {
    const err = e as { responseCode?: number; response?: string; command?: string; message: string };
    return {
      ok: false,
      code: err.responseCode ?? 0,
      response: err.response ?? err.message,
      command: err.command ?? '',
    };
  } finally {
    transport.close();
  }
}
