import { html, type Html } from './html.js';
import { BASE, csrfField, layout, time } from './layout.js';
import type { KeyMode } from '../../modules/account/keys/scopes.js';
import type { Session } from '../../modules/account/sessions/sessions.service.js';

// The API's JSON shapes (GET and POST /v1/api-keys), as the page reads them.
export interface KeyJson {
  id: string;
  name: string | null;
  mode: string;
  scopes: string[];
  prefix: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

/** POST /v1/api-keys: the key with its secret, shown in this answer only. */
export interface NewKeyJson extends KeyJson {
  key: string;
}

/** What the create form was sent with, to fill it again when it is refused. */
export interface KeyForm {
  name: string;
  mode: string;
  scopes: string[];
}

export interface KeysPageOptions {
  /** every scope there is, in the API's order */
  scopes: readonly string[];
  modes: readonly KeyMode[];
  /** the key just created: its secret is on this page and nowhere else, ever */
  created?: NewKeyJson;
  /** a key just revoked */
  revoked?: string;
  /** the create form was refused */
  error?: { message: string; form: KeyForm };
}

export function keysPage(session: Session, keys: KeyJson[], o: KeysPageOptions): Html {
  return layout(
    { title: o.created ? 'New API key' : 'API keys', section: '/api-keys', session },
    html`<h1>API keys</h1>
${o.created ? newKey(o.created) : ''}
${o.revoked && keys.some((k) => k.id === o.revoked && k.revoked_at) ? html`<p class="note" role="status">Key <code>${o.revoked}</code> is revoked: requests with it are refused from now on, and its dashboard sessions end.</p>` : ''}
<h2>Keys of this project</h2>
${
  keys.length
    ? html`<div class="scroll"><table>
<caption class="visually-hidden">API keys of the project (secrets are never shown here)</caption>
<thead><tr><th scope="col">Name</th><th scope="col">Id</th><th scope="col">Mode</th><th scope="col">Scopes</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col">State</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
<tbody>${keys.map((k) => keyRow(session, k))}</tbody>
</table></div>`
    : html`<p class="empty">No keys.</p>`
}
${createForm(session, o)}`,
  );
}

function newKey(k: NewKeyJson): Html {
  return html`<section class="card" aria-labelledby="h-new">
<h2 id="h-new">Key created: ${k.name ?? k.id}</h2>
<div class="note" role="alert"><p><strong>Copy this key now: it cannot be shown again.</strong> Posthorn keeps only its SHA-256, so neither this page nor anyone else can show it a second time. If it is lost, revoke it and create another.</p></div>
<label for="new-key">The new ${k.mode} API key (${k.scopes.join(', ')})</label>
<input id="new-key" name="new-key" type="text" readonly value="${k.key}" autocomplete="off" spellcheck="false">
<button type="button" class="secondary" data-copy="${k.key}">Copy</button>
</section>`;
}

function keyRow(session: Session, k: KeyJson): Html {
  const mine = k.id === session.principal.key.id;
  const label = k.name ?? k.id;
  return html`<tr>
  <td>${k.name ?? html`<span class="muted">(no name)</span>`}${mine ? html` <span class="tag">this session</span>` : ''}</td>
  <td><code>${k.id}</code><br><span class="muted">${k.prefix}…</span></td>
  <td>${k.mode}</td>
  <td>${k.scopes.map((s) => html`<span class="tag">${s}</span> `)}</td>
  <td>${time(k.created_at)}</td>
  <td>${k.last_used_at ? time(k.last_used_at) : html`<span class="muted">never</span>`}</td>
  <td>${k.revoked_at ? html`<span class="badge s-failed">revoked</span> ${time(k.revoked_at)}` : html`<span class="badge s-succeeded">active</span>`}</td>
  <td>${
    k.revoked_at
      ? ''
      : html`<form method="post" action="${BASE}/api-keys/${k.id}/revoke">${csrfField(session)}<button type="submit" class="secondary">${mine ? 'Revoke and sign out' : 'Revoke'}<span class="visually-hidden"> key ${label}</span></button></form>`
  }</td>
</tr>`;
}

function createForm(session: Session, o: KeysPageOptions): Html {
  const held = new Set<string>(session.principal.key.scopes);
  const mode = session.principal.key.mode;
  const form = o.error?.form;
  const checked = new Set(form?.scopes ?? []);
  return html`<section class="card" aria-labelledby="h-create">
<h2 id="h-create">Create a key</h2>
<form method="post" action="${BASE}/api-keys">
  ${csrfField(session)}
  ${o.error ? html`<p class="error" role="alert" id="k-error">${o.error.message}</p>` : ''}
  <label for="k-name">Name</label>
  <input id="k-name" name="name" type="text" maxlength="200" autocomplete="off" value="${form?.name ?? ''}" placeholder="reporting">
  <label for="k-mode">Mode</label>
  <select id="k-mode" name="mode">${o.modes.map((m) => html`<option value="${m}"${m === mode ? html` selected` : html` disabled`}>${m}${m === mode ? '' : ` (a ${mode} key cannot create one)`}</option>`)}</select>
  <fieldset${o.error ? html` aria-describedby="k-error"` : ''}>
    <legend>Scopes</legend>
    <p class="muted">A key can grant only the scopes it holds itself.</p>
    ${o.scopes.map((s) => {
      const id = `k-scope-${s.replace(/[^a-z]/g, '-')}`;
      return html`<label class="check" for="${id}"><input type="checkbox" id="${id}" name="scopes" value="${s}"${checked.has(s) ? html` checked` : ''}${held.has(s) ? '' : html` disabled`}> ${s}${held.has(s) ? '' : html` <span class="muted">(this key does not hold it)</span>`}</label>`;
    })}
  </fieldset>
  <button type="submit">Create key</button>
</form>
</section>`;
}
