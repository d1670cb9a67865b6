/**
 * What one search box query can name (docs/dashboard.md, "Search"): an
 * email by its id or by the Message-ID Posthorn gave it, a recipient's
 * address, a tag (`name:value`), and words looked for in domain names,
 * template ids and names, and contact addresses. Pure: the page asks the
 * /v1 routes for each.
 */
export interface SearchTerms {
  /** the query, trimmed and at most 320 characters */
  q: string;
  /** an email id, from `msg_…` or from a Message-ID `<…@host>` of ours */
  emailId: string | null;
  /** an address: the emails sent to it */
  recipient: string | null;
  /** `name:value`: the emails carrying that tag */
  tag: string | null;
  /** lower-cased, for the lists matched by substring (domains, templates, contacts) */
  words: string;
}

const EMAIL_ID = /^msg_[0-9a-z]{26}$/;
// Posthorn's Message-ID is `<` + the email id without `msg_` + `@` + outbound.hostname + `>`
const OUR_MESSAGE_ID = /^<?([0-9a-z]{26})@[^\s<>@]+>?$/;
const ADDRESS = /^[^\s@<>]+@[^\s@<>]+\.[^\s@<>]+$/;
const TAG = /^[A-Za-z0-9_.-]{1,64}:\S+$/;

export const MAX_QUERY = 320;

export function searchTerms(raw: string): SearchTerms {
  const q = raw.trim().slice(0, MAX_QUERY);
  const lower = q.toLowerCase();
  const fromMessageId = OUR_MESSAGE_ID.exec(lower)?.[1];
  const emailId = EMAIL_ID.test(lower) ? lower : fromMessageId ? `msg_${fromMessageId}` : null;
  return {
    q,
    emailId,
    recipient: !emailId && ADDRESS.test(q) ? q.replace(/^<|>$/g, '') : null,
    tag: !emailId && !q.includes('@') && TAG.test(q) ? q : null,
    words: lower,
  };
}
