// One-click unsubscribe on the send path (RFC 2369, RFC 8058; docs/unsubscribe.md). Pure.

/** The value of `List-Unsubscribe` that asks the appliance to write the header itself. */
export const AUTO_UNSUBSCRIBE = '<auto>';

const named = (headers: Record<string, string>) =>
  Object.keys(headers).find((k) => k.toLowerCase() === 'list-unsubscribe');

/**
 * A send asks for List-Unsubscribe when it carries the header, `<auto>` or
 * its own: it is the kind of mail (a newsletter, a notification) an
 * unsubscription stops.
 */
export const asksForUnsubscribe = (headers: Record<string, string>) => named(headers) !== undefined;

/** The appliance writes the header (and List-Unsubscribe-Post) for each recipient. */
export function wantsAutoUnsubscribe(headers: Record<string, string>): boolean {
  const name = named(headers);
  return name !== undefined && headers[name].trim().toLowerCase() === AUTO_UNSUBSCRIBE;
}

/** A domain that asks for it on every send adds `<auto>`; a send's own List-Unsubscribe header wins. */
export const withAutoUnsubscribe = (headers: Record<string, string>) =>
  asksForUnsubscribe(headers) ? headers : { ...headers, 'List-Unsubscribe': AUTO_UNSUBSCRIBE };

/**
 * The headers one recipient's copy goes out with: `<auto>` replaced by the
 * recipient's own links, the HTTPS one first, and List-Unsubscribe-Post only
 * with an HTTPS link (RFC 8058 §3.1: one-click needs one). Both are in the
 * DKIM signature's h= (mta/dkim.ts), as RFC 8058 §4 requires.
 */
export function unsubscribeHeaders(
  headers: Record<string, string>,
  links: { url: string | null; mailto: string },
): Record<string, string> {
  const name = named(headers);
  if (name === undefined || !wantsAutoUnsubscribe(headers)) return headers;
  // the appliance writes both headers: a List-Unsubscribe-Post of the client's would be a second one
  const rest = Object.fromEntries(
    Object.entries(headers).filter(([k]) => k !== name && k.toLowerCase() !== 'list-unsubscribe-post'),
  );
  const value = [...(links.url ? [`<${links.url}>`] : []), `<mailto:${links.mailto}?subject=unsubscribe>`].join(', ');
  return {
    ...rest,
    'List-Unsubscribe': value,
    ...(links.url ? { 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' } : {}),
  };
}
