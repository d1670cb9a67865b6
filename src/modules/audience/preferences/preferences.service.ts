import { ApiError } from '../../../lib/errors.js';
import type { Clock } from '../../../lib/time.js';
import type { Store } from '../../../store/store.js';
import { contactById } from '../contacts/contacts.repo.js';
import { updateContactOf } from '../contacts/contacts.service.js';
import { subscriptionsOf, topicsOfProject } from '../topics/topics.repo.js';
import { verifyPreferenceToken } from './preference-token.js';

// The hosted preference page (`/p/<token>`, docs/contacts.md): a contact sees the project's topics
// and changes its subscriptions, or leaves all broadcast mail, without a key. The change goes
// through the contacts module's own update, so that it emits the contact.updated PATCH does.

export interface PreferenceDeps {
  store: Store;
  clock: Clock;
  /** the installation's tracking key (tracking.service.ts trackingKey): it signs preference links */
  key(): Promise<Buffer>;
}

export interface PreferenceView {
  email: string;
  /** every topic of the project, oldest first, with the contact's subscription (its choice, else the default) */
  topics: Array<{ id: string; name: string; description: string | null; subscribed: boolean }>;
  /** out of all broadcast mail */
  unsubscribed: boolean;
}

/** What the page's form sends: the topics it showed, those left ticked, and the unsubscribe-from-all box. */
export interface PreferenceChoice {
  shown: string[];
  subscribed: string[];
  unsubscribed: boolean;
}

/**
 * The contact a link names. A pending one (a signup not confirmed) has no
 * page: its link is shown only once a signup is confirmed, and a change here
 * must not stand for that confirmation. A suspended project's contacts keep
 * theirs: leaving its mail must stay possible.
 */
async function contactOf(deps: PreferenceDeps, token: string) {
  const id = verifyPreferenceToken(await deps.key(), token);
  const c = id ? await contactById(deps.store.reader, id) : null;
  return c && !c.pending ? c : null;
}

/** The page's content; null for a token that does not verify or a contact that is gone (404). */
export async function viewPreferences(deps: PreferenceDeps, token: string): Promise<PreferenceView | null> {
  const c = await contactOf(deps, token);
  if (!c) return null;
  const [topics, subs] = await Promise.all([
    topicsOfProject(deps.store.reader, c.projectId),
    subscriptionsOf(deps.store.reader, c.projectId, [c.id]),
  ]);
  const mine = subs.get(c.id) ?? {};
  return {
    email: c.email,
    topics: topics.reverse().map((t) => ({
      id: t.id,
      name: t.name,
      description: t.description,
      subscribed: mine[t.id] ?? t.default === 'opt_out',
    })),
    unsubscribed: c.unsubscribed,
  };
}

/**
 * Saves the page's choices: a topic the page did not show (made since it was
 * loaded) keeps the contact's state, one deleted since is left out.
 */
export async function savePreferences(
  deps: PreferenceDeps,
  token: string,
  choice: PreferenceChoice,
): Promise<PreferenceView | null> {
  const c = await contactOf(deps, token);
  if (!c) return null;
  const shown = new Set(choice.shown);
  const ticked = new Set(choice.subscribed);
  const topics = (await topicsOfProject(deps.store.reader, c.projectId)).filter((t) => shown.has(t.id));
  const choices = Object.fromEntries(topics.map((t) => [t.id, ticked.has(t.id)]));
  try {
    await updateContactOf(deps, c.projectId, c.id, { topics: choices, unsubscribed: choice.unsubscribed });
  } catch (e) {
    // deleted since it was read: the link is no longer valid
    if (e instanceof ApiError && e.code === 'not_found') return null;
    throw e;
  }
  return viewPreferences(deps, token);
}

export function preferenceService(deps: PreferenceDeps) {
  return {
    view: (token: string) => viewPreferences(deps, token),
    save: (token: string, choice: PreferenceChoice) => savePreferences(deps, token, choice),
  };
}

export type PreferenceService = ReturnType<typeof preferenceService>;
