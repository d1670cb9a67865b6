import { domainToASCII } from 'node:url';

/**
 * An address as mail servers take it (RFC 5321 §4.1.2 Mailbox, with RFC
 * 6531's UTF-8 local parts), not every string RFC 5322 allows: comments,
 * folding whitespace, obsolete forms ("a"."b", a . b) and address literals
 * (user@[192.0.2.1]) parse as addresses there, yet no mailbox provider
 * accepts mail for them. Pure. test/fixtures/addresses/ holds the corpus
 * that pins these judgements down.
 */
export type Mailbox =
  | {
      ok: true;
      local: string;
      /** the domain as DNS knows it: lower-case, IDN labels in punycode (A-labels) */
      domain: string;
      /** whether delivery needs SMTPUTF8 (a non-ASCII local part) */
      smtputf8: boolean;
    }
  | { ok: false; why: string };

/** RFC 5321 §4.5.3.1: local part 64 octets, domain 255; RFC 3696 erratum 1690: a path of 256 less the brackets. */
const MAX_LOCAL = 64;
const MAX_DOMAIN = 255;
const MAX_ADDRESS = 254;

// atext (RFC 5322 §3.2.3), and RFC 6531's UTF-8: any letter, mark, number, punctuation or symbol beyond ASCII
const ATOM = /^[A-Za-z0-9!#$%&'*+\-/=?^_`{|}~\u0080-\u{10FFFF}]+$/u;
// invisible, unassigned, private-use and lone-surrogate code points, and a mark with no letter to sit on,
// are not text anyone can type back (and a lone surrogate is not UTF-8 at all, RFC 6532 §3.1)
const NOT_ALLOWED_UTF8 = /[\p{C}\p{Z}]|^\p{M}/u;
// qtextSMTP and quoted-pairSMTP (RFC 5321 §4.1.2): printable ASCII and space, \ and " only escaped; UTF-8 (RFC 6531).
// At least one character: RFC 5321 allows "" but it names no mailbox (Go's net/mail and email-validator refuse it too)
const QUOTED = /^"(?:[\x20\x21\x23-\x5b\x5d-\x7e\u0080-\u{10FFFF}]|\\[\x20-\x7e])+"$/u;
const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;
// domainToASCII parses a URL host: it stops at / ? # \ :, decodes %xx and drops what IDNA maps to nothing
// (soft hyphen, zero-width space), so a domain is only handed to it with ASCII that is LDH or a dot, and nothing invisible
// eslint-disable-next-line no-control-regex -- control characters are among what is refused
const NOT_HOST = /[\x00-\x2c\x2f\x3a-\x40\x5b-\x60\x7b-\x7f\p{C}\p{Z}]/u;

export function readMailbox(address: string): Mailbox {
  if (typeof address !== 'string' || address.length === 0) return { ok: false, why: 'empty' };
  // 254 octets are at least 64 characters of 4 octets, and no more than 254 characters: past a
  // generous bound nothing is a mailbox, and the regular expressions below never see megabytes
  if (address.length > 1024) return { ok: false, why: 'longer than 254 octets' };
  // eslint-disable-next-line no-control-regex -- refusing control characters is the point
  if (/[\x00-\x1f\x7f]/.test(address)) return { ok: false, why: 'control characters' };
  const at = address.lastIndexOf('@');
  if (at <= 0 || at === address.length - 1) return { ok: false, why: 'no local part or domain' };
  const local = address.slice(0, at);
  const domainPart = address.slice(at + 1);
  const localOk = local.startsWith('"') ? QUOTED.test(local) && !/[\p{C}\u2028\u2029]/u.test(local) : isDotAtom(local);
  if (!localOk) return { ok: false, why: 'local part' };
  const localOctets = Buffer.byteLength(local, 'utf8');
  if (localOctets > MAX_LOCAL) return { ok: false, why: 'local part longer than 64 octets' };
  const domain = asciiDomain(domainPart);
  if (!domain) return { ok: false, why: 'domain' };
  // RFC 6531 §3.3: the limits count octets of whichever form travels, the A-labels or the UTF-8 U-labels
  const domainOctets = Math.max(domain.length, Buffer.byteLength(domainPart.normalize('NFC'), 'utf8'));
  if (domainOctets > MAX_DOMAIN || localOctets + 1 + domainOctets > MAX_ADDRESS)
    return { ok: false, why: 'longer than 254 octets' };
  return { ok: true, local, domain, smtputf8: /[\u0080-\uffff]/.test(local) };
}

function isDotAtom(local: string): boolean {
  const atoms = local.split('.');
  return atoms.every((a) => a.length > 0 && ATOM.test(a) && !NOT_ALLOWED_UTF8.test(a));
}

/**
 * The domain in A-labels, or null: a host name of at least two LDH labels
 * whose last is not all digits (so neither "localhost" nor an IPv4 address
 * written as a name), no address literal, no trailing dot.
 */
function asciiDomain(domain: string): string | null {
  if (domain.endsWith('.') || NOT_HOST.test(domain)) return null;
  const ascii = /^[\x21-\x7e]+$/.test(domain) ? domain.toLowerCase() : domainToASCII(domain.normalize('NFC'));
  if (!ascii) return null;
  const labels = ascii.split('.');
  if (labels.length < 2 || !labels.every((l) => LABEL.test(l))) return null;
  if (/^\d+$/.test(labels[labels.length - 1])) return null;
  // an A-label must be valid punycode: domainToASCII refuses what it cannot read back
  if (labels.some((l) => l.startsWith('xn--')) && !domainToASCII(ascii)) return null;
  return ascii;
}
