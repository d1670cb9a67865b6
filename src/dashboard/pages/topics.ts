import { html, type Html } from './html.js';
import { BASE, csrfField, time } from './layout.js';
import { formMessage, invalid, messageFor, type FormError } from './form-errors.js';
import { contactsLayout, doneNote, pager, type ListJson, type TopicJson } from './contact-shared.js';
import type { Session } from '../../modules/account/sessions/sessions.service.js';

// Topics: the list and its create form, a topic's page to change it, and its delete (pure).

export interface TopicFormValues {
  name: string;
  description: string;
  default_subscription: string;
}

export const TOPIC_FIELDS = ['name', 'description', 'default_subscription'] as const;

export function topicValues(f: URLSearchParams): TopicFormValues {
  return {
    name: f.get('name')?.trim() ?? '',
    description: f.get('description')?.trim() ?? '',
    default_subscription: f.get('default_subscription') ?? 'subscribed',
  };
}

const DEFAULTS: Record<string, string> = {
  subscribed: 'Subscribed: every contact gets it until they unsubscribe from it',
  unsubscribed: 'Not subscribed: only contacts who subscribe to it get it',
};

/** The fields of a topic; `creating` adds the default subscription, which cannot change afterwards. */
function topicForm(session: Session, action: string, v: TopicFormValues, creating: boolean, e?: FormError): Html {
  const p = creating ? 'top-' : 'set-';
  return html`<form method="post" action="${action}" class="settings">
${csrfField(session)}
${formMessage(e)}
<label for="${p}name">Topic name</label>
<input id="${p}name" name="name" required maxlength="200" autocomplete="off" value="${v.name}"${invalid(e, p, 'name')}>
${messageFor(e, p, 'name')}
<label for="${p}description">Description <span class="muted">(optional, shown on the preference page)</span></label>
<textarea id="${p}description" name="description" maxlength="1000" rows="2"${invalid(e, p, 'description')}>${v.description}</textarea>
${messageFor(e, p, 'description')}
${
  creating
    ? html`<fieldset${e?.field === 'default_subscription' ? html` aria-describedby="${p}default_subscription-error"` : ''}><legend>A contact who has not chosen is</legend>
${messageFor(e, p, 'default_subscription')}
${Object.entries(DEFAULTS).map(([value, label]) => html`<label class="check" for="${p}default-${value}"><input type="radio" id="${p}default-${value}" name="default_subscription" value="${value}"${v.default_subscription === value ? html` checked` : ''}> ${label}</label>`)}
</fieldset>`
    : ''
}
<button type="submit">${creating ? 'Make topic' : 'Save topic'}</button>
</form>`;
}

export interface TopicListView {
  topics: ListJson<TopicJson>;
  form: TopicFormValues;
  error?: FormError;
  done?: string;
}

export function topicListPage(session: Session, v: TopicListView): Html {
  return contactsLayout(
    session,
    'Topics',
    '/topics',
    html`<h1>Topics</h1>
${doneNote(v.done)}
${
  v.topics.data.length
    ? html`<div class="scroll"><table>
<caption class="visually-hidden">Topics of the project, newest first</caption>
<thead><tr><th scope="col">Topic</th><th scope="col">Who has not chosen</th><th scope="col">Created</th></tr></thead>
<tbody>${v.topics.data.map((t) => html`<tr><td><a href="${BASE}/topics/${t.id}">${t.name}</a>${t.description ? html`<br><span class="muted">${t.description}</span>` : ''}</td><td>${t.default_subscription}</td><td>${time(t.created_at)}</td></tr>`)}</tbody>
</table></div>`
    : html`<p class="empty">No topics yet: a topic is a kind of broadcast (news, offers) that contacts subscribe to or leave on their preference page.</p>`
}
${pager('/topics', v.topics.next_cursor, {}, 'topics')}
<section class="card" aria-labelledby="h-add">
<h2 id="h-add">Make a topic</h2>
${topicForm(session, `${BASE}/topics`, v.form, true, v.error)}
</section>`,
  );
}

export function topicPage(
  session: Session,
  t: TopicJson,
  edit: { values?: TopicFormValues; error?: FormError; done?: string },
): Html {
  const values = edit.values ?? {
    name: t.name,
    description: t.description ?? '',
    default_subscription: t.default_subscription,
  };
  return contactsLayout(
    session,
    t.name,
    '/topics',
    html`<p class="crumbs"><a href="${BASE}/topics">Topics</a></p>
<h1>${t.name}</h1>
${doneNote(edit.done)}
<dl class="facts">
  <div><dt>Id</dt><dd><code>${t.id}</code></dd></div>
  <div><dt>A contact who has not chosen</dt><dd>${t.default_subscription}</dd></div>
  <div><dt>Created</dt><dd>${time(t.created_at)}</dd></div>
</dl>
<div class="actions"><a class="button-link danger" href="${BASE}/topics/${t.id}/delete">Delete topic…</a></div>
<section class="card" aria-labelledby="h-edit">
<h2 id="h-edit">Name and description</h2>
<p class="muted">Who gets it by default stays as it was made: changing it would subscribe or unsubscribe contacts who never chose.</p>
${topicForm(session, `${BASE}/topics/${t.id}`, values, false, edit.error)}
</section>`,
  );
}

export function deleteTopicPage(session: Session, t: TopicJson): Html {
  return contactsLayout(
    session,
    `Delete ${t.name}`,
    '/topics',
    html`<p class="crumbs"><a href="${BASE}/topics">Topics</a> › <a href="${BASE}/topics/${t.id}">${t.name}</a></p>
<h1>Delete this topic?</h1>
<p><strong>${t.name}</strong></p>
<p>The contacts' choices about it go with it. A topic a broadcast is on cannot be deleted until that broadcast is cancelled or changed.</p>
<form method="post" action="${BASE}/topics/${t.id}/delete">${csrfField(session)}<button type="submit" class="danger">Delete topic</button> <a href="${BASE}/topics/${t.id}">Keep it</a></form>`,
  );
}
