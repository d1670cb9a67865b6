import { html, queryString, type Html } from './html.js';
import { BASE, layout } from './layout.js';
import type { Session } from '../../modules/account/sessions/sessions.service.js';

// What the pages of contacts, audiences, segments, topics, properties and signup forms share: the API's
// JSON shapes as they read them, the sub-navigation, and the pager (pure).

export interface ListJson<T> {
  data: T[];
  next_cursor: string | null;
}

export interface ContactJson {
  id: string;
  email: string;
  first_name: string | null;
  last_name: string | null;
  properties: Record<string, string | number | boolean>;
  unsubscribed: boolean;
  pending: boolean;
  audiences: string[];
  topics: Record<string, boolean>;
  created_at: string;
  updated_at: string;
}

export interface PropertyJson {
  key: string;
  type: 'string' | 'number' | 'boolean' | 'date';
  fallback: string | number | boolean | null;
  created_at: string;
}

export interface TopicJson {
  id: string;
  name: string;
  description: string | null;
  default_subscription: 'subscribed' | 'unsubscribed';
  created_at: string;
}

export interface AudienceJson {
  id: string;
  name: string;
  contact_count: number;
  created_at: string;
}

export interface SegmentJson {
  id: string;
  name: string;
  audience_id: string | null;
  filter: string;
  created_at: string;
}

/** The sub-sections, in the sub-navigation's order. */
const SUBNAV = [
  { path: '/contacts', label: 'All contacts' },
  { path: '/audiences', label: 'Audiences' },
  { path: '/segments', label: 'Segments' },
  { path: '/topics', label: 'Topics' },
  { path: '/contact-properties', label: 'Properties' },
  { path: '/forms', label: 'Signup forms' },
  { path: '/contacts/import', label: 'Import' },
] as const;

export type ContactsSubsection = (typeof SUBNAV)[number]['path'];

/** A page of the Contacts section: the top navigation's Contacts marked, and the sub-navigation. */
export function contactsLayout(session: Session, title: string, sub: ContactsSubsection, content: Html): Html {
  return layout(
    { title, section: '/contacts', session },
    html`<nav aria-label="Contacts" class="subnav"><ul>${SUBNAV.map((n) => html`<li><a href="${BASE}${n.path}"${n.path === sub ? html` aria-current="page"` : ''}>${n.label}</a></li>`)}</ul></nav>
${content}`,
  );
}

/** A status line saying what the last action did (after its redirect). */
export function doneNote(done: string | undefined): Html {
  return done ? html`<p class="note" role="status">${done}</p>` : html``;
}

/** The link to the next (older) page of a list, keeping its filters. */
export function pager(
  path: string,
  nextCursor: string | null,
  query: Record<string, string | undefined>,
  what: string,
) {
  return nextCursor
    ? html`<p class="pager"><a href="${BASE}${path}${queryString({ ...query, cursor: nextCursor })}">Older ${what} →</a></p>`
    : html``;
}

/** A contact's name, or nothing. */
export const nameOf = (c: ContactJson) => [c.first_name, c.last_name].filter(Boolean).join(' ');

/** Where a contact stands for broadcasts. */
export function standing(c: ContactJson): string {
  if (c.pending) return 'pending confirmation';
  return c.unsubscribed ? 'unsubscribed' : 'subscribed';
}

/** The contacts of a list (all, an audience's, a segment's) as a table; `extra` adds a last cell to each row. */
export function contactTable(caption: string, contacts: ContactJson[], extra?: (c: ContactJson) => Html): Html {
  return html`<div class="scroll"><table class="contacts">
<caption class="visually-hidden">${caption}</caption>
<thead><tr><th scope="col">Address</th><th scope="col">Name</th><th scope="col">Broadcasts</th><th scope="col">Added</th>${extra ? html`<th scope="col"><span class="visually-hidden">Actions</span></th>` : ''}</tr></thead>
<tbody>${contacts.map((c) => html`<tr><td class="addr"><a href="${BASE}/contacts/${c.id}">${c.email}</a></td><td>${nameOf(c)}</td><td>${standing(c)}</td><td>${new Date(c.created_at).toISOString().slice(0, 10)}</td>${extra ? html`<td>${extra(c)}</td>` : ''}</tr>`)}</tbody>
</table></div>`;
}
