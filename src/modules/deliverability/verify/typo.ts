/**
 * Likely typos of popular mail domains and of common top-level domains
 * (gmial.com, hotmial.com, gmail.con, yaho.com), the way mailcheck.js finds
 * them: the closest popular domain within a small edit distance, else the
 * closest common TLD. Pure; the caller decides with DNS whether to offer it
 * (a domain that has its own MX is taken as meant, unless it is a known
 * typo squatted by someone else).
 */

/** Mailbox providers people mistype most (the big free providers and ISPs). */
const POPULAR = [
  'gmail.com',
  'googlemail.com',
  'yahoo.com',
  'yahoo.co.uk',
  'yahoo.fr',
  'yahoo.de',
  'yahoo.co.jp',
  'ymail.com',
  'rocketmail.com',
  'hotmail.com',
  'hotmail.co.uk',
  'hotmail.fr',
  'hotmail.de',
  'hotmail.it',
  'outlook.com',
  'live.com',
  'msn.com',
  'icloud.com',
  'me.com',
  'mac.com',
  'aol.com',
  'protonmail.com',
  'proton.me',
  'gmx.com',
  'gmx.de',
  'gmx.net',
  'web.de',
  't-online.de',
  'mail.ru',
  'yandex.ru',
  'yandex.com',
  'qq.com',
  '163.com',
  '126.com',
  'naver.com',
  'orange.fr',
  'free.fr',
  'laposte.net',
  'libero.it',
  'comcast.net',
  'verizon.net',
  'att.net',
  'sbcglobal.net',
  'bellsouth.net',
  'cox.net',
  'charter.net',
  'btinternet.com',
  'sky.com',
  'virginmedia.com',
  'shaw.ca',
  'rogers.com',
  'bigpond.com',
  'zoho.com',
  'fastmail.com',
];

/** Top-level domains (and second-level suffixes) that mistyped ones are corrected to. */
const COMMON_TLDS = [
  'com',
  'net',
  'org',
  'edu',
  'gov',
  'info',
  'biz',
  'io',
  'co.uk',
  'co.jp',
  'com.au',
  'de',
  'fr',
  'it',
  'es',
  'nl',
  'ca',
  'ru',
  'jp',
  'uk',
  'us',
  'ch',
  'be',
  'at',
  'se',
  'no',
  'dk',
  'fi',
  'pl',
  'br',
  'in',
  'me',
];

/** Mistyped TLDs that are TLDs of their own, yet almost never meant: corrected anyway. */
const TLD_TYPOS: Record<string, string> = {
  con: 'com',
  cmo: 'com',
  cpm: 'com',
  vom: 'com',
  xom: 'com',
  ocm: 'com',
  comm: 'com',
  coom: 'com',
  cm: 'com',
  om: 'com',
  nte: 'net',
  ner: 'net',
  met: 'net',
  ogr: 'org',
  orh: 'org',
};

/** Typos of popular domains that have mail servers of their own (registered by others): suggested even so. */
export const KNOWN_TYPOS: ReadonlySet<string> = new Set([
  'gmial.com',
  'gmai.com',
  'gamil.com',
  'gnail.com',
  'gmaill.com',
  'gmal.com',
  'gmil.com',
  'gmali.com',
  'gmaik.com',
  'gmail.co',
  'gmail.cm',
  'hotmial.com',
  'hotmal.com',
  'hotmil.com',
  'hotamil.com',
  'homail.com',
  'hotnail.com',
  'hotmai.com',
  'hotmail.co',
  'hotmaill.com',
  'yaho.com',
  'yahooo.com',
  'yhoo.com',
  'yahho.com',
  'yaoo.com',
  'yahoo.co',
  'outlok.com',
  'outloo.com',
  'outlook.co',
  'iclod.com',
  'icoud.com',
  'icloud.co',
  'aol.co',
]);

const POPULAR_SET = new Set(POPULAR);

/** The domain this one most likely meant to be, or null (it is popular itself, or nothing is close). */
export function suggestDomain(domain: string): string | null {
  const d = domain.toLowerCase();
  if (POPULAR_SET.has(d)) return null;
  const whole = closest(d, POPULAR, maxDistance(d));
  if (whole) return whole;
  const dot = d.indexOf('.');
  if (dot <= 0) return null;
  const name = d.slice(0, dot);
  const tld = d.slice(dot + 1);
  const fixedTld = TLD_TYPOS[tld] ?? (COMMON_TLDS.includes(tld) ? null : closest(tld, COMMON_TLDS, 1));
  if (!fixedTld) return null;
  const fixed = `${name}.${fixedTld}`;
  // gmial.con: both halves
  return closest(fixed, POPULAR, maxDistance(fixed)) ?? fixed;
}

/** Two edits for a name as long as gmail.com, one for short ones: "gmx.com" is not a typo of "gmail.com". */
function maxDistance(d: string): number {
  return d.length >= 9 ? 2 : 1;
}

function closest(d: string, candidates: readonly string[], max: number): string | null {
  let best: string | null = null;
  let bestDistance = max + 1;
  for (const c of candidates) {
    if (Math.abs(c.length - d.length) > max) continue;
    const dist = distance(d, c);
    if (dist < bestDistance) {
      best = c;
      bestDistance = dist;
    }
  }
  return best;
}

/** Optimal string alignment distance: insertions, deletions, substitutions and swaps of neighbours each cost one. */
function distance(a: string, b: string): number {
  const rows: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) rows[0][j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(rows[i - 1][j] + 1, rows[i][j - 1] + 1, rows[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, rows[i - 2][j - 2] + 1);
      rows[i][j] = v;
    }
  }
  return rows[a.length][b.length];
}
