import { html } from './html.js';
import { BASE, layout } from './layout.js';

/** The key is posted once and exchanged for a session; it is never kept in the page or the browser. */
export function signInPage(o: { error?: string; next?: string } = {}) {
  return layout(
    { title: 'Sign in', session: null },
    html`<section class="card narrow">
<h1>Sign in</h1>
<p>Sign in with an API key of your project. The dashboard shows what that key may see and do, and nothing else.</p>
${o.error ? html`<p class="error" role="alert" id="sign-in-error">${o.error}</p>` : ''}
<form method="post" action="${BASE}/sign-in">
  <input type="hidden" name="next" value="${o.next ?? ''}">
  <label for="key">API key</label>
  <input id="key" name="key" type="password" autocomplete="off" spellcheck="false" required${o.error ? html` aria-describedby="sign-in-error" aria-invalid="true"` : ''}>
  <button type="submit">Sign in</button>
</form>
<p class="muted">The key is exchanged for a session that lasts 12 hours; the key itself is not stored in your browser.</p>
</section>`,
  );
}
