/**
 * The one HTML escape: text and attribute values (either quote) in every page and email we write.
 * Named entities, `&#39;` for the apostrophe (`&apos;` is not HTML 4, which some mail clients still
 * speak). Strings without a special character are returned as they are: templates escape every
 * variable they print, most of them plain.
 */
const HTML_SPECIAL = /[&<>"']/;
const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(s: string): string {
  return HTML_SPECIAL.test(s) ? s.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]) : s;
}
