import type { Middleware } from 'koa';
import type { PreferenceService, PreferenceView } from '../modules/audience/preferences/preferences.service.js';
import { escapeHtml } from '../lib/html.js';
import { formFields, maskedAddress, methodNotAllowed, readBoundedBody, respondPage, tooLarge } from './public-page.js';

// The hosted preference page (docs/contacts.md), beside the API without a key: `GET /p/{token}`
// shows the project's topics with the contact's subscriptions and changes nothing; `POST
// /p/{token}` saves the form and shows the page again. Works without JavaScript.

/** A topic id is 30 characters; a thousand of them and their names fit well below this. */
const MAX_POST_BYTES = 64 * 1024;

const NOT_VALID = '<p>This link is not valid, or the address it was sent to is no longer on the list.</p>';

function preferencesBody(view: PreferenceView, saved: boolean): string {
  const topics = view.topics
    .map((t) => {
      const id = escapeHtml(t.id);
      const hint = t.description ? `<p class="hint" id="d-${id}">${escapeHtml(t.description)}</p>` : '';
      return `<div class="choice"><input type="checkbox" id="t-${id}" name="topic" value="${id}"${t.subscribed ? ' checked' : ''}${t.description ? ` aria-describedby="d-${id}"` : ''}><label for="t-${id}">${escapeHtml(t.name)}</label></div>${hint}<input type="hidden" name="shown" value="${id}">`;
    })
    .join('\n');
  return `${saved ? '<p class="status" role="status">Saved.</p>' : ''}
<p>Mail to ${escapeHtml(maskedAddress(view.email))}.</p>
<form method="post">
<fieldset><legend>Topics you get</legend>
${topics || '<p>There are no topics to choose from.</p>'}
</fieldset>
<fieldset><legend>All broadcast mail</legend>
<div class="choice"><input type="checkbox" id="unsubscribed" name="unsubscribed" value="1"${view.unsubscribed ? ' checked' : ''}><label for="unsubscribed">Unsubscribe from all broadcast mail</label></div>
</fieldset>
<p>Transactional mail, such as receipts and password resets, still arrives whatever you choose here.</p>
<button type="submit">Save</button>
</form>`;
}

export function preferencesPages(service: PreferenceService): Middleware {
  return async (ctx, next) => {
    const m = /^\/p\/([^/]+)$/.exec(ctx.path);
    if (!m) {
      await next();
      return;
    }
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD' && ctx.method !== 'POST')
      return methodNotAllowed(ctx, 'GET, HEAD, POST');
    const token = m[1];
    if (ctx.method !== 'POST') {
      const view = await service.view(token);
      return view
        ? respondPage(ctx, 200, 'Your email preferences', preferencesBody(view, false))
        : respondPage(ctx, 404, 'Link not valid', NOT_VALID);
    }
    const body = await readBoundedBody(ctx, MAX_POST_BYTES);
    if (body === null) return tooLarge(ctx, 'The preferences form is short; this request was not.');
    const fields = formFields(body);
    const view = await service.save(token, {
      shown: fields.getAll('shown'),
      subscribed: fields.getAll('topic'),
      unsubscribed: fields.has('unsubscribed'),
    });
    return view
      ? respondPage(ctx, 200, 'Your email preferences', preferencesBody(view, true))
      : respondPage(ctx, 404, 'Link not valid', NOT_VALID);
  };
}
