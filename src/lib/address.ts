import { domainToASCII } from 'node:url';

export interface ParsedAddress {
  /** local@domain, the domain in lower-case A-label form */
  address: string;
  /** display name, unquoted, or null */
  name: string | null;
  /** A-label domain */
  domain: string;
  /** for a header: 'Name <address>' with the name quoted when it needs to be, or the bare address */
  formatted: string;
}

export type AddressResult = { ok: true; value: ParsedAddress } | { ok: false; reason: string };

// RFC 5322 §3.2.3 atext for an unquoted local part (dot-atom).
const ATOM = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+$/;
const LABEL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

/**
 * One address as a client writes it in to/cc/bcc/reply_to/from:
 * `user@example.com`, `Name <user@example.com>` or `"Last, First" <…>`.
 * The domain may be an IDN (stored as its A-label). Local parts are ASCII:
 * without SMTPUTF8 (RFC 6531) a UTF-8 local part cannot be delivered, so
 * it is refused here rather than bounced later. Limits: the whole address
 * 254 (interface §8; RFC 5321 §4.5.3.1's path of 256 less its brackets) and
 * what DNS allows of the domain (253, labels of 63). RFC 5321's 64 octets for
 * a local part is not enforced: the interface sets only the 254, and a
 * server that refuses a longer local part answers 5xx, which bounces that
 * recipient with the server's reply.
 */
export function parseAddress(input: string): AddressResult {
  if (/[\r\n\0]/.test(input)) return fail('must not contain line breaks or NUL characters');
  const text = input.trim();
  if (!text) return fail('must not be empty');
  let name: string | null = null;
  let bare = text;
  const angle = text.indexOf('<');
  if (angle >= 0 || text.includes('>')) {
    const m = /^(.*?)\s*<([^<>]*)>$/s.exec(text);
    if (!m) return fail('must be an address, or a name followed by an address in <>');
    bare = m[2].trim();
    const raw = m[1].trim();
    if (raw) {
      const unquoted = raw.startsWith('"') ? /^"((?:[^"\\]|\\.)*)"$/.exec(raw)?.[1]?.replace(/\\(.)/g, '$1') : raw;
      if (unquoted === undefined) return fail('has a display name with unbalanced quotes');
      // eslint-disable-next-line no-control-regex -- control characters are what this refuses
      if (/[\x00-\x08\x0b-\x1f\x7f]/.test(unquoted)) return fail('has control characters in the display name');
      name = unquoted.trim() || null;
    }
  }
  // whitespace, commas and semicolons outside a quoted local part mean a list, not one address
  if (/[\s,;]/.test(bare.replace(/^"(?:[^"\\]|\\.)*"/, 'q'))) return fail('must hold exactly one address');
  const at = bare.lastIndexOf('@');
  if (at <= 0 || at === bare.length - 1) return fail('must look like name@example.com');
  const local = bare.slice(0, at);
  const rawDomain = bare.slice(at + 1);
  if (!localPartOk(local))
    return fail('has a local part that is not a valid address (use letters, digits and . _ + - or a quoted string)');
  if (rawDomain.startsWith('[')) return fail('must use a domain name, not an IP address literal');
  const domain = domainToASCII(rawDomain.toLowerCase().replace(/\.$/, ''));
  if (!domain) return fail(`has an invalid domain "${rawDomain}"`);
  if (domain.length > 253) return fail('has a domain longer than 253 characters');
  const labels = domain.split('.');
  if (labels.length < 2) return fail('must have a domain with a dot, such as example.com');
  if (!labels.every((l) => LABEL.test(l))) return fail(`has an invalid domain "${rawDomain}"`);
  if (/^[0-9]+$/.test(labels[labels.length - 1])) return fail('must use a domain name, not an IP address');
  const address = `${local}@${domain}`;
  if (address.length > 254) return fail('must be at most 254 characters');
  return { ok: true, value: { address, name, domain, formatted: name ? `${quoteName(name)} <${address}>` : address } };
}

function localPartOk(local: string): boolean {
  if (local.startsWith('"')) {
    // quoted-string (RFC 5321 §4.1.2): printable ASCII, with \ escapes
    return /^"(?:[\x20\x21\x23-\x5b\x5d-\x7e]|\\[\x20-\x7e])*"$/.test(local);
  }
  return local.split('.').every((part) => part.length > 0 && ATOM.test(part));
}

/** A display name goes in quotes when it holds RFC 5322 specials; non-ASCII is left for the MIME encoder. */
function quoteName(name: string): string {
  return /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~ \u0080-\uffff-]+$/.test(name) ? name : `"${name.replace(/(["\\])/g, '\\$1')}"`;
}

function fail(reason: string): AddressResult {
  return { ok: false, reason };
}
