import { XMLParser, XMLValidator } from 'fast-xml-parser';
import ipaddr from 'ipaddr.js';
import { readReportFile, ReportError } from './report-file.js';

/**
 * An aggregate report (RFC 7489 §7.2 and Appendix C) read into plain values. Liberal in what
 * real reporters vary (namespaces, element order, one or many records and auth results, case,
 * missing optional elements); strict about what the numbers depend on.
 */

export type Disposition = 'none' | 'quarantine' | 'reject';
export type Verdict = 'pass' | 'fail';

export interface PublishedPolicy {
  p: string | null;
  sp: string | null;
  pct: number | null;
  adkim: string | null;
  aspf: string | null;
}

export interface DkimResult {
  domain: string;
  selector?: string;
  result: string;
}

export interface SpfResult {
  domain: string;
  scope?: string;
  result: string;
}

export interface ReportRow {
  sourceIp: string;
  count: number;
  disposition: Disposition;
  /** policy_evaluated: DKIM passed AND aligned with the header From domain. */
  dkimEval: Verdict;
  /** policy_evaluated: SPF passed AND aligned with the header From domain. */
  spfEval: Verdict;
  headerFrom: string;
  envelopeFrom?: string;
  dkim: DkimResult[];
  spf: SpfResult[];
}

export interface AggregateReport {
  orgName: string;
  email: string | null;
  reportId: string;
  /** ms since the epoch (the report says seconds). */
  begin: number;
  end: number;
  /** policy_published.domain, lower case. */
  domain: string;
  policy: PublishedPolicy;
  rows: ReportRow[];
}

/** More rows than this is not a report of one domain's day; 20 MB of XML holds 25,000 to 45,000. */
export const MAX_ROWS = 100_000;

type Node = Record<string, unknown>;

// Entities stay text (processEntities: false): a report has no use for them, and a document that
// declares any is refused before parsing, so neither XXE nor entity expansion can happen here.
const parser = new XMLParser({
  ignoreAttributes: true,
  removeNSPrefix: true,
  processEntities: false,
  htmlEntities: false,
  ignoreDeclaration: true,
  ignorePiTags: true,
  parseTagValue: false,
  trimValues: true,
});

const PREDEFINED: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };

/** The five predefined entities and character references, in one bounded pass (XML 1.0 §4.1, §4.6). */
function decodeText(s: string): string {
  return s.replace(/&(#[xX][0-9a-fA-F]{1,6}|#[0-9]{1,7}|lt|gt|amp|quot|apos);/g, (whole, ref: string) => {
    if (ref[0] !== '#') return PREDEFINED[ref] ?? whole;
    const code = ref[1] === 'x' || ref[1] === 'X' ? parseInt(ref.slice(2), 16) : parseInt(ref.slice(1), 10);
    return code <= 0x10ffff ? String.fromCodePoint(code) : whole;
  });
}

const isNode = (v: unknown): v is Node => typeof v === 'object' && v !== null && !Array.isArray(v);

/** One element or many: the parser gives an array only when the element repeats. */
const list = (v: unknown): unknown[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);

/** An element's text; an element with children or attributes-only content has none. */
function text(node: unknown, key: string): string | undefined {
  const v = isNode(node) ? node[key] : undefined;
  const one: unknown = Array.isArray(v) ? v[0] : v;
  if (typeof one === 'string') return decodeText(one);
  if (isNode(one) && typeof one['#text'] === 'string') return decodeText(one['#text']);
  return undefined;
}

const lower = (node: unknown, key: string) => text(node, key)?.toLowerCase() || undefined;

function child(node: unknown, key: string): unknown {
  const v = isNode(node) ? node[key] : undefined;
  return Array.isArray(v) ? v[0] : v;
}

function required(node: unknown, key: string, where: string): string {
  const v = text(node, key);
  if (!v) throw new ReportError('not_a_report', `the report has no <${key}> in <${where}>`);
  return v;
}

const missing = (what: string) => new ReportError('not_a_report', `the report has no ${what}`);

/** A count or a time: digits only, so "-3", "1e3" and "12abc" are refused rather than guessed. */
function wholeNumber(value: string | undefined, what: string): number {
  const n = value !== undefined && /^\d+$/.test(value) ? Number(value) : NaN;
  if (!Number.isSafeInteger(n))
    throw new ReportError('not_a_report', `${what} is "${value ?? ''}", not a whole number`);
  return n;
}

function sourceIp(value: string | undefined, index: number): string {
  const ip = value ?? '';
  const valid = ipaddr.IPv4.isValidFourPartDecimal(ip) || (ip.includes(':') && ipaddr.IPv6.isValid(ip));
  if (!valid)
    throw new ReportError('not_a_report', `record ${index + 1}: <source_ip> "${ip}" is not an IPv4 or IPv6 address`);
  return ip;
}

/** Anything but quarantine or reject (a missing element, a newer schema's value) applied no policy. */
function disposition(value: string | undefined): Disposition {
  return value === 'quarantine' || value === 'reject' ? value : 'none';
}

/** Anything but an explicit pass (fail, softfail, a missing element) did not pass DMARC's check. */
const verdict = (value: string | undefined): Verdict => (value === 'pass' ? 'pass' : 'fail');

function dkimResults(auth: unknown): DkimResult[] {
  return list(isNode(auth) ? auth.dkim : undefined).map((d) => {
    const selector = text(d, 'selector');
    return {
      domain: lower(d, 'domain') ?? '',
      ...(selector ? { selector } : {}),
      result: lower(d, 'result') ?? 'none',
    };
  });
}

function spfResults(auth: unknown): SpfResult[] {
  return list(isNode(auth) ? auth.spf : undefined).map((s) => {
    const scope = lower(s, 'scope');
    return { domain: lower(s, 'domain') ?? '', ...(scope ? { scope } : {}), result: lower(s, 'result') ?? 'none' };
  });
}

function readRow(record: unknown, index: number): ReportRow {
  const row = child(record, 'row');
  if (!isNode(row)) throw new ReportError('not_a_report', `record ${index + 1} has no <row>`);
  const evaluated = child(row, 'policy_evaluated');
  const ids = child(record, 'identifiers');
  const envelopeFrom = lower(ids, 'envelope_from');
  const auth = child(record, 'auth_results');
  return {
    sourceIp: sourceIp(text(row, 'source_ip'), index),
    count: wholeNumber(text(row, 'count'), `record ${index + 1}: <count>`),
    disposition: disposition(lower(evaluated, 'disposition')),
    dkimEval: verdict(lower(evaluated, 'dkim')),
    spfEval: verdict(lower(evaluated, 'spf')),
    headerFrom: lower(ids, 'header_from') ?? '',
    ...(envelopeFrom ? { envelopeFrom } : {}),
    dkim: dkimResults(auth),
    spf: spfResults(auth),
  };
}

/** The published policy as the reporter saw it; informative only, so an odd value reads as absent. */
function readPolicy(published: unknown): PublishedPolicy {
  const pct = text(published, 'pct');
  return {
    p: lower(published, 'p') ?? null,
    sp: lower(published, 'sp') ?? null,
    pct: pct !== undefined && /^\d{1,3}$/.test(pct) ? Number(pct) : null,
    adkim: lower(published, 'adkim') ?? null,
    aspf: lower(published, 'aspf') ?? null,
  };
}

/**
 * Refused outright rather than configured away: a DOCTYPE with an internal
 * subset or any ENTITY declaration (XXE, billion laughs). A bare reference to
 * an external DTD (`<!DOCTYPE feedback SYSTEM "rua.dtd">`, which some
 * reporters write) declares nothing, and nothing is ever fetched: it is let
 * through.
 */
function refuseDeclarations(xml: string): void {
  if (/<!ENTITY/i.test(xml)) throw new ReportError('unsafe_xml', 'the XML declares an entity; reports never need one');
  for (const m of xml.matchAll(/<!DOCTYPE/gi)) {
    const bare =
      /^<!DOCTYPE\s+[A-Za-z_][\w:.-]*(?:\s+(?:SYSTEM\s+(?:"[^"<>[\]]*"|'[^'<>[\]]*')|PUBLIC\s+(?:"[^"<>[\]]*"|'[^'<>[\]]*')\s+(?:"[^"<>[\]]*"|'[^'<>[\]]*')))?\s*>/i;
    if (!bare.test(xml.slice(m.index)))
      throw new ReportError('unsafe_xml', 'the XML has a DOCTYPE with declarations of its own; reports never need one');
  }
}

/** The document's tree; a malformed one is refused whole, not read up to where it breaks. */
function parseXml(xml: string): Node {
  refuseDeclarations(xml);
  const valid = XMLValidator.validate(xml);
  if (valid !== true)
    throw new ReportError('corrupt', `the XML is malformed: ${valid.err.msg} (line ${valid.err.line})`);
  try {
    return parser.parse(xml) as Node;
  } catch (e) {
    throw new ReportError('corrupt', `the XML cannot be read: ${(e as Error).message}`);
  }
}

/** The root: `<feedback>` in any namespace. */
function feedbackOf(tree: Node): Node {
  if ('feedback' in tree) return isNode(tree.feedback) ? tree.feedback : {};
  const root = Object.keys(tree).find((k) => !k.startsWith('?') && k !== '#text');
  throw new ReportError('not_a_report', `the XML's root element is <${root ?? 'none'}>, not <feedback>`);
}

function readRows(feedback: Node): ReportRow[] {
  const records = list(feedback.record);
  if (records.length === 0) throw missing('<record>');
  if (records.length > MAX_ROWS)
    throw new ReportError('too_large', `the report has ${records.length} records; at most ${MAX_ROWS} are read`);
  return records.map(readRow);
}

/** Reads the XML text of one aggregate report. */
export function parseAggregateReport(xml: string): AggregateReport {
  const feedback = feedbackOf(parseXml(xml));
  const metadata = child(feedback, 'report_metadata');
  if (!isNode(metadata)) throw missing('<report_metadata>');
  const range = child(metadata, 'date_range');
  if (!isNode(range)) throw missing('<date_range> in <report_metadata>');
  const published = child(feedback, 'policy_published');
  if (!isNode(published)) throw missing('<policy_published>');
  return {
    orgName: required(metadata, 'org_name', 'report_metadata'),
    email: text(metadata, 'email') || null,
    reportId: required(metadata, 'report_id', 'report_metadata'),
    begin: wholeNumber(text(range, 'begin'), '<date_range><begin>') * 1000,
    end: wholeNumber(text(range, 'end'), '<date_range><end>') * 1000,
    domain: required(published, 'domain', 'policy_published').toLowerCase(),
    policy: readPolicy(published),
    rows: readRows(feedback),
  };
}

/** One attachment (zip, gzip or XML) to a report; throws ReportError with a stable `code`. */
export function readAggregateReport(bytes: Uint8Array, filename?: string, contentType?: string): AggregateReport {
  return parseAggregateReport(readReportFile(bytes, filename, contentType));
}
