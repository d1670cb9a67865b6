import { html, queryString, type Html } from './html.js';
import { BASE, csrfField, layout, time } from './layout.js';
import { endpointForm, type EndpointChoices, type EndpointFormValues } from './webhook-form.js';
import type { FormError } from './form-errors.js';
import { deliveryLog, type DeliveryJson } from './webhook-log.js';
import type { Session } from '../../modules/account/sessions/sessions.service.js';

export type { DeliveryJson } from './webhook-log.js';

// The /v1/webhooks shapes, as the pages read them.
export interface EndpointJson {
  id: string;
  url: string;
  events: string[];
  active: boolean;
  description: string | null;
  signature: string;
  payload: string;
  created_at: string;
}

/** POST /v1/webhooks: the endpoint with its secret, shown in this answer only. */
export interface NewEndpointJson extends EndpointJson {
  secret: string;
}

export interface EndpointListView {
  endpoints: EndpointJson[];
  choices: EndpointChoices;
  /** the add form: what it was sent with when the API refused it, else the defaults */
  form: EndpointFormValues;
  error?: FormError;
  /** an endpoint just deleted */
  deleted?: string;
}

export function endpointListPage(session: Session, v: EndpointListView): Html {
  return layout(
    { title: 'Webhooks', section: '/webhooks', session },
    html`<h1>Webhooks</h1>
${v.deleted ? html`<p class="note" role="status">Endpoint <code>${v.deleted}</code> is deleted: nothing more is sent to it.</p>` : ''}
${
  v.endpoints.length
    ? html`<div class="scroll"><table>
<caption class="visually-hidden">Webhook endpoints of the project</caption>
<thead><tr><th scope="col">Endpoint</th><th scope="col">Events</th><th scope="col">Active</th><th scope="col">Created</th></tr></thead>
<tbody>${v.endpoints.map((e) => html`<tr><td class="addr"><a href="${BASE}/webhooks/${e.id}">${e.url}</a>${e.description ? html`<br><span class="muted">${e.description}</span>` : ''}</td><td>${e.events.length}</td><td>${e.active ? 'yes' : 'paused'}</td><td>${time(e.created_at)}</td></tr>`)}</tbody>
</table></div>`
    : html`<p class="empty">No webhook endpoints yet: add one below, and Posthorn POSTs each event to it, signed.</p>`
}
<section class="card" aria-labelledby="h-add">
<h2 id="h-add">Add an endpoint</h2>
${endpointForm(session, { action: `${BASE}/webhooks`, submit: 'Add endpoint', values: v.form, choices: v.choices, prefix: 'add-', error: v.error })}
</section>`,
  );
}

export interface EndpointView {
  endpoint: EndpointJson;
  deliveries: { data: DeliveryJson[]; next_cursor: string | null };
  choices: EndpointChoices;
  /** the event types a test event can have */
  testTypes: readonly string[];
  /** a secret just made (the endpoint created, or its secret rotated): shown this once */
  newSecret?: { secret: string; previousExpiresAt: string | null; created: boolean };
  /** what the last action did, said in a status line */
  done?: string;
  /** the settings form, refused: what it was sent with */
  settings?: { values: EndpointFormValues; error: FormError };
}

export function endpointPage(session: Session, v: EndpointView): Html {
  const e = v.endpoint;
  const values: EndpointFormValues = v.settings?.values ?? {
    url: e.url,
    description: e.description ?? '',
    events: e.events,
    signature: e.signature,
    payload: e.payload,
  };
  return layout(
    { title: e.url, section: '/webhooks', session },
    html`<p class="crumbs"><a href="${BASE}/webhooks">Webhooks</a></p>
<h1 class="addr">${e.url}</h1>
${v.newSecret ? newSecret(v.newSecret) : ''}
${v.done ? html`<p class="note" role="status">${v.done}</p>` : ''}
<dl class="facts">
  <div><dt>Id</dt><dd><code>${e.id}</code></dd></div>
  <div><dt>State</dt><dd>${e.active ? 'active' : 'paused: events that happen now are not sent to it'}</dd></div>
  <div><dt>Created</dt><dd>${time(e.created_at)}</dd></div>
  ${e.description ? html`<div><dt>Description</dt><dd>${e.description}</dd></div>` : ''}
  <div><dt>Signature, payload</dt><dd>${e.signature}, ${e.payload}</dd></div>
  <div><dt>Events</dt><dd>${e.events.map((t) => html`<span class="tag">${t}</span> `)}</dd></div>
</dl>
<div class="actions">
<form method="post" action="${BASE}/webhooks/${e.id}/active">${csrfField(session)}<input type="hidden" name="active" value="${e.active ? 'false' : 'true'}"><button type="submit" class="secondary">${e.active ? 'Pause endpoint' : 'Resume endpoint'}</button></form>
<form method="post" action="${BASE}/webhooks/${e.id}/rotate-secret">${csrfField(session)}<button type="submit" class="secondary">Rotate signing secret</button></form>
<a class="button-link danger" href="${BASE}/webhooks/${e.id}/delete">Delete endpoint…</a>
</div>
${e.active ? testForm(session, e, v.testTypes) : ''}
<details${v.settings ? html` open` : ''}><summary>Change settings</summary>
${endpointForm(session, { action: `${BASE}/webhooks/${e.id}`, submit: 'Save settings', values, choices: v.choices, prefix: 'set-', error: v.settings?.error })}
</details>
${deliveryLog(session, e.id, v.deliveries)}`,
  );
}

function testForm(session: Session, e: EndpointJson, types: readonly string[]): Html {
  return html`<form method="post" action="${BASE}/webhooks/${e.id}/test" class="filters">
${csrfField(session)}
<div><label for="test-type">Test event</label>
<select id="test-type" name="type">${types.map((t) => html`<option value="${t}">${t}</option>`)}</select></div>
<button type="submit" class="secondary">Send test event</button>
</form>`;
}

function newSecret(s: NonNullable<EndpointView['newSecret']>): Html {
  return html`<div class="note" role="alert"><p><strong>${s.created ? 'Endpoint added. Its signing secret, shown this once:' : 'The new signing secret, shown this once:'}</strong></p>
<p><label for="new-secret">Signing secret</label><input id="new-secret" readonly value="${s.secret}"> <button type="button" class="secondary" data-copy="${s.secret}">Copy</button></p>
<p>Store it in your receiver now: it cannot be shown again.${s.previousExpiresAt ? html` The previous secret keeps signing too until ${time(s.previousExpiresAt)}.` : ''}</p></div>`;
}

/** The confirmation before a delete: what stops, and the button that does it. */
export function deleteEndpointPage(session: Session, e: EndpointJson): Html {
  return layout(
    { title: `Delete ${e.url}`, section: '/webhooks', session },
    html`<p class="crumbs"><a href="${BASE}/webhooks">Webhooks</a> › <a href="${BASE}/webhooks/${e.id}">${e.url}</a></p>
<h1>Delete this endpoint?</h1>
<p class="addr"><strong>${e.url}</strong></p>
<p>Nothing more is sent to it: its pending deliveries and retries are deleted with it, and so is its delivery log. To stop it for a while and keep those, pause it instead.</p>
<form method="post" action="${BASE}/webhooks/${e.id}/delete">${csrfField(session)}<button type="submit" class="danger">Delete endpoint</button> <a href="${BASE}/webhooks/${e.id}${queryString({})}">Keep it</a></form>`,
  );
}
