import { Headers, type Part } from './mime.js';

/**
 * The message a report is about, as the report returns or quotes it: its headers and its
 * Message-ID, looked for from the likeliest place to the least. Pure.
 */

/** The parts of the report itself, not of a message it returns. */
export function ownParts(p: Part): Part[] {
  return p.type.startsWith('message/') ? [] : [p, ...p.parts.flatMap(ownParts)];
}

/**
 * The returned message's headers: a message/rfc822 part (not one that is
 * itself a report: a gateway's notice can wrap the DSN, whose own copy is
 * the original), a text/rfc822-headers part, or a message/partial part that
 * holds the message's beginning.
 */
export function originalHeaders(parts: Part[]): Headers | null {
  for (const p of parts) {
    if (
      (p.type === 'message/rfc822' || p.type === 'message/global') &&
      p.parts[0] &&
      p.parts[0].type !== 'multipart/report'
    )
      return p.parts[0].headers;
    if (p.type === 'text/rfc822-headers' || p.type === 'message/rfc822-headers' || p.type === 'message/global-headers')
      return new Headers(p.text);
    if (p.type === 'message/partial') return new Headers(p.text.split(/\r?\n\r?\n/)[0]);
  }
  return null;
}

/** The Message-ID of the message a report is about, from the likeliest place to the least. */
export function originalId(root: Part, parts: Part[]): string | null {
  const fromPart = bracketed(originalHeaders(parts)?.get('message-id') ?? null);
  if (fromPart) return fromPart;
  // formats that quote the returned headers in their text
  for (const p of parts) {
    if (!p.type.startsWith('text/')) continue;
    const m = /^[ \t>]*Message-I[Dd]:[ \t]*(<[^>\s]+>)/im.exec(p.text);
    if (m) return m[1];
  }
  // a returned message pasted in as a part of its own, its headers read as the part's
  for (const p of parts)
    if (p !== root && p.headers.has('message-id') && p.headers.has('from'))
      return bracketed(p.headers.get('message-id'));
  // said in a sentence: "… the message-id of X-1234@host received from …"
  for (const p of ownParts(root)) {
    const m = /\bmessage-id(?: of| is)?:?[ \t]+<?([^\s<>@]+@[^\s<>,;]+?)>?(?=[\s,;]|\.(?:\s|$)|$)/i.exec(
      p.type.startsWith('text/') ? p.text : '',
    );
    if (m) return `<${m[1]}>`;
  }
  // a bounce sent as a reply to the message (Verizon's)
  return bracketed(root.headers.get('in-reply-to'));
}

export function bracketed(value: string | null): string | null {
  if (!value) return null;
  const m = /<[^<>\s]+>/.exec(value);
  if (m) return m[0];
  const bare = value.trim().split(/\s+/)[0];
  return bare && bare.includes('@') ? `<${bare}>` : null;
}
