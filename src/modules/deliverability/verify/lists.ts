import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

/**
 * The lists address verification reads, from maintained packages (data
 * only: nothing is fetched at install or run time):
 * - disposable domains: disposable-email-domains-js, a verbatim copy of the
 *   community blocklist (github.com/disposable-email-domains), CC0; plus the
 *   operator's file (verify.disposable_file) of additions and `!exceptions`;
 * - free providers: email-providers' all.json less every disposable domain
 *   (the list mixes some in), plus providers it lacks;
 * - role accounts: role-based-email-addresses (mixmaxhq) and RFC 2142's
 *   mailboxes, without its entries that are first names or numbers more than roles.
 */
export interface AddressLists {
  isDisposable(domain: string): boolean;
  isFreeProvider(domain: string): boolean;
  isRole(local: string): boolean;
}

const require = createRequire(import.meta.url);

/** RFC 2142 §3–5 and the mailboxes RFC 5321 requires */
const RFC_2142 = [
  'info',
  'marketing',
  'sales',
  'support',
  'abuse',
  'noc',
  'security',
  'postmaster',
  'hostmaster',
  'usenet',
  'news',
  'webmaster',
  'www',
  'uucp',
  'ftp',
];
const NOT_ROLES = new Set(['aaa', 'abc', 'test', 'user', 'hi', 'hello', 'me', 'mail', 'email']);
const MORE_FREE = [
  'proton.me',
  'pm.me',
  'protonmail.ch',
  'tuta.com',
  'tuta.io',
  'tutanota.com',
  'tutanota.de',
  'tutamail.com',
  'fastmail.com',
  'fastmail.fm',
  'hey.com',
  'skiff.com',
];

export interface ListOptions {
  /** verify.disposable_file: one domain a line, `!domain` takes one off the list, `#` starts a comment */
  disposableFile: string | null;
}

export function loadAddressLists(o: ListOptions): AddressLists {
  const disposable = new Set(
    (require('disposable-email-domains-js/dist/dict/disposable_email_blocklist.json') as string[]).map((d) =>
      d.toLowerCase(),
    ),
  );
  const exceptions = new Set<string>();
  if (o.disposableFile) applyOperatorFile(disposable, exceptions, readFileSync(o.disposableFile, 'utf8'));
  const free = new Set(
    [...(require('email-providers/all.json') as string[]), ...MORE_FREE]
      .map((d) => d.toLowerCase())
      .filter((d) => !disposable.has(d)),
  );
  const roles = new Set(
    [...(require('role-based-email-addresses') as string[]), ...RFC_2142]
      .map((r) => r.toLowerCase())
      .filter((r) => !NOT_ROLES.has(r) && !/^\d+$/.test(r)),
  );
  return {
    isDisposable: (domain) => inList(disposable, exceptions, domain),
    isFreeProvider: (domain) => free.has(domain),
    // "sales+eu" and "Sales" are the sales mailbox too
    isRole: (local) => roles.has(local.toLowerCase().replace(/\+.*$/, '')),
  };
}

/**
 * A domain or any parent of it (mail.tempmail.example is as disposable as
 * tempmail.example), unless an exception names it or a nearer parent: the
 * operator's `!corp.example.com` keeps that subdomain out while example.com
 * stays listed.
 */
function inList(list: ReadonlySet<string>, exceptions: ReadonlySet<string>, domain: string): boolean {
  for (let d = domain; d.includes('.'); d = d.slice(d.indexOf('.') + 1)) {
    if (exceptions.has(d)) return false;
    if (list.has(d)) return true;
  }
  return false;
}

function applyOperatorFile(list: Set<string>, exceptions: Set<string>, text: string): void {
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.replace(/#.*$/, '').trim().toLowerCase();
    if (!line) continue;
    if (line.startsWith('!')) exceptions.add(line.slice(1).trim());
    else list.add(line);
  }
}
