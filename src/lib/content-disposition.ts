/**
 * `attachment; filename="…"; filename*=UTF-8''…` (RFC 6266, RFC 5987): an
 * ASCII name for old clients and the exact name for the rest. A raw name with
 * characters outside Latin-1 cannot go into a header at all (Node refuses it).
 */
export function attachmentDisposition(raw: string): string {
  // a lone UTF-16 surrogate (a decoded name can have one) cannot be percent-encoded: U+FFFD instead
  const filename = raw.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD');
  const ascii = filename.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '_');
  const utf8 = encodeURIComponent(filename).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `attachment; filename="${ascii}"; filename*=UTF-8''${utf8}`;
}
