import type { FilterName } from './ast.js';
import { MAILTO_ADDRESS } from './urls.js';

// CONTRACT §6's filters. Numbers, currencies and dates follow the send's
// `language` through Intl (English when there is none or Intl does not know
// it); dates are shown in UTC, the one zone a template can rely on.

const DATE_STYLES = ['short', 'medium', 'long', 'full'] as const;
const DATE_PATTERN = /^(?:YYYY|MM|DD|HH|mm|ss|[ \-/.:,T])+$/;

/** The argument a filter takes, checked at publish: a reason when it is wrong. */
export function checkFilterArg(
  name: FilterName,
  arg: string | number | null,
): { arg: string | number | null } | string {
  switch (name) {
    case 'truncate':
      if (typeof arg !== 'number' || !Number.isInteger(arg) || arg < 1)
        return 'truncate needs a length of at least 1, e.g. truncate:40';
      return { arg };
    case 'number':
      if (arg === null) return { arg };
      if (typeof arg !== 'number' || !Number.isInteger(arg) || arg < 0 || arg > 20)
        return 'number takes the count of decimals, 0..20, e.g. number:2';
      return { arg };
    case 'currency':
      if (arg === null) return { arg: 'USD' };
      if (typeof arg !== 'string' || !/^[A-Za-z]{3}$/.test(arg))
        return `currency needs a 3-letter ISO 4217 code, e.g. currency:'EUR' (got ${JSON.stringify(arg)})`;
      return { arg: arg.toUpperCase() };
    case 'date':
      if (arg === null) return { arg: 'medium' };
      if (typeof arg === 'string' && ((DATE_STYLES as readonly string[]).includes(arg) || DATE_PATTERN.test(arg)))
        return { arg };
      return `date takes 'short', 'medium', 'long', 'full' or a pattern of YYYY MM DD HH mm ss (got ${JSON.stringify(arg)})`;
    default:
      if (arg !== null) return `${name} takes no argument`;
      return { arg };
  }
}

const locales = new Map<string, string>();

/** The locale Intl uses for a send's language: the tag itself when Intl knows it, else English. */
export function localeOf(language: string | null | undefined): string {
  if (!language) return 'en';
  let l = locales.get(language);
  if (l === undefined) {
    try {
      l = Intl.NumberFormat.supportedLocalesOf([language]).length > 0 ? language : 'en';
    } catch {
      l = 'en';
    }
    if (locales.size < 1000) locales.set(language, l);
  }
  return l;
}

// Building an Intl formatter costs ~50x formatting with it: one per locale and option.
const numberFormats = new Map<string, Intl.NumberFormat>();
const dateFormats = new Map<string, Intl.DateTimeFormat>();

// Bounded: Intl takes hundreds of thousands of tags (en-Abcd, …), each a send's to choose.
const MAX_FORMATS = 2000;

function remember<F>(cache: Map<string, F>, key: string, make: () => F): F {
  let f = cache.get(key);
  if (!f) {
    if (cache.size >= MAX_FORMATS) cache.clear();
    cache.set(key, (f = make()));
  }
  return f;
}

function numberFormat(locale: string, kind: string, options: Intl.NumberFormatOptions): Intl.NumberFormat {
  return remember(numberFormats, `${locale}|${kind}`, () => new Intl.NumberFormat(locale, options));
}

function toNumber(v: unknown): number | null {
  if (typeof v === 'number') return Number.isFinite(v) ? v : null;
  if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) return Number(v);
  return null;
}

function toDate(v: unknown): Date | null {
  const ms = typeof v === 'number' ? v : typeof v === 'string' ? Date.parse(v) : NaN;
  return Number.isFinite(ms) && Math.abs(ms) <= 8.64e15 ? new Date(ms) : null;
}

const two = (n: number) => (n < 10 ? `0${n}` : String(n));

function formatDate(d: Date, style: string, locale: string): string {
  if ((DATE_STYLES as readonly string[]).includes(style)) {
    return remember(
      dateFormats,
      `${locale}|${style}`,
      () => new Intl.DateTimeFormat(locale, { dateStyle: style as 'short', timeZone: 'UTC' }),
    ).format(d);
  }
  return style.replace(/YYYY|MM|DD|HH|mm|ss/g, (t) => {
    switch (t) {
      case 'YYYY':
        return String(d.getUTCFullYear()).padStart(4, '0');
      case 'MM':
        return two(d.getUTCMonth() + 1);
      case 'DD':
        return two(d.getUTCDate());
      case 'HH':
        return two(d.getUTCHours());
      case 'mm':
        return two(d.getUTCMinutes());
      default:
        return two(d.getUTCSeconds());
    }
  });
}

/** Applies one filter to a present value; `text` is the value as it would be inserted. A value it cannot read passes unchanged. */
export function applyFilter(
  name: FilterName,
  arg: string | number | null,
  value: unknown,
  text: (v: unknown) => string,
  locale: string,
): unknown {
  switch (name) {
    case 'upper':
      return text(value).toLocaleUpperCase(locale);
    case 'lower':
      return text(value).toLocaleLowerCase(locale);
    case 'capitalize': {
      const s = text(value);
      const first = s.codePointAt(0);
      if (first === undefined) return s;
      const n = first > 0xffff ? 2 : 1;
      return s.slice(0, n).toLocaleUpperCase(locale) + s.slice(n);
    }
    case 'trim':
      return text(value).trim();
    case 'truncate': {
      const s = text(value);
      if (s.length <= (arg as number)) return s;
      const chars = Array.from(s);
      return chars.length <= (arg as number)
        ? s
        : `${chars
            .slice(0, arg as number)
            .join('')
            .trimEnd()}…`;
    }
    case 'number': {
      const n = toNumber(value);
      if (n === null) return value;
      return arg === null
        ? numberFormat(locale, 'n', {}).format(n)
        : numberFormat(locale, `n${arg}`, {
            minimumFractionDigits: arg as number,
            maximumFractionDigits: arg as number,
          }).format(n);
    }
    case 'currency': {
      const n = toNumber(value);
      return n === null
        ? value
        : numberFormat(locale, `c${arg}`, { style: 'currency', currency: arg as string }).format(n);
    }
    case 'date': {
      const d = toDate(value);
      return d === null ? value : formatDate(d, arg as string, locale);
    }
    case 'url': {
      const encoded = encodeURIComponent(wellFormed(text(value)));
      return arg === MAILTO_ADDRESS ? encoded.replace(/%40/g, '@') : encoded;
    }
  }
}

// encodeURIComponent throws on a lone surrogate, which JSON can bring: it becomes U+FFFD as TextEncoder makes it
const wellFormed = (s: string) =>
  s.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd');
