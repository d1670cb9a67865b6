import { domainToASCII, domainToUnicode } from 'node:url';

export type NameCheck = { ok: true; name: string; unicode: string } | { ok: false; reason: string };

const LABEL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

/**
 * A sending domain as typed by a user → its A-label form (IDN accepted),
 * lower-case, without the root dot; or why it is not a domain name (RFC 1035
 * §2.3.1 LDH labels, RFC 5890 for the xn-- form).
 */
export function normalizeDomainName(input: string): NameCheck {
  const trimmed = input.trim().replace(/\.$/, '');
  if (!trimmed) return { ok: false, reason: 'must not be empty' };
  if (/[\s/@:]/.test(trimmed))
    return { ok: false, reason: 'must be a bare domain name such as example.com (no scheme, path, port or address)' };
  if (/^[0-9.]+$/.test(trimmed) || trimmed.includes('['))
    return { ok: false, reason: 'must be a domain name, not an IP address' };
  const ascii = domainToASCII(trimmed.toLowerCase());
  if (!ascii) return { ok: false, reason: 'is not a valid domain name' };
  if (ascii.length > 253) return { ok: false, reason: 'must be at most 253 characters' };
  const labels = ascii.split('.');
  if (labels.length < 2) return { ok: false, reason: 'must have at least two labels, such as example.com' };
  const bad = labels.find((l) => !LABEL.test(l));
  if (bad !== undefined)
    return {
      ok: false,
      reason: `has an invalid label "${bad}": letters, digits and inner hyphens only, 1 to 63 characters`,
    };
  if (/^[0-9]+$/.test(labels[labels.length - 1]))
    return { ok: false, reason: 'must end in a top-level domain that is not numeric' };
  return { ok: true, name: ascii, unicode: domainToUnicode(ascii) };
}

export const isSubdomainOf = (name: string, parent: string) => name === parent || name.endsWith(`.${parent}`);
