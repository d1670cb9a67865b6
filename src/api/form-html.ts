import type { Confirmation } from '../modules/audience/forms/form-confirmation.service.js';
import type { FormPage } from '../modules/audience/forms/form-submissions.service.js';
import { HONEYPOT } from '../modules/audience/forms/form-rules.js';
import { escapeHtml } from '../lib/html.js';
import { maskedAddress } from './public-page.js';

// The bodies of a signup form's pages (docs/forms.md): labelled fields with the autocomplete
// names browsers fill, the honeypot hidden from people and from assistive technology, and the
// answers, which say nothing about the address given.

const AUTOCOMPLETE: Record<string, string> = { email: 'email', first_name: 'given-name', last_name: 'family-name' };

/** `invalid`: the error above the form is about this field. */
function inputOf(f: FormPage['fields'][number], value: string, invalid: boolean): string {
  const id = `f-${f.key}`;
  const described = invalid ? ' aria-invalid="true" aria-describedby="form-error"' : '';
  const label = `<label for="${id}">${escapeHtml(f.label)}${f.type === 'email' ? '' : ' <span class="optional">(optional)</span>'}</label>`;
  if (f.type === 'boolean') {
    // the hidden "false" goes first: a ticked box sends "true" after it, and the last value counts
    return `<input type="hidden" name="${f.key}" value="false"><div class="choice"><input type="checkbox" id="${id}" name="${f.key}" value="true"${value === 'true' ? ' checked' : ''}${described}>${label}</div>`;
  }
  const attrs =
    f.type === 'email'
      ? 'type="email" autocomplete="email" required'
      : f.type === 'name'
        ? `type="text" autocomplete="${AUTOCOMPLETE[f.key]}"`
        : f.type === 'number'
          ? 'type="number" step="any" inputmode="decimal" autocomplete="off"'
          : f.type === 'date'
            ? 'type="date" autocomplete="off"'
            : 'type="text" autocomplete="off"';
  return `${label}<input id="${id}" name="${f.key}" ${attrs} value="${escapeHtml(value)}"${described}>`;
}

/** The form; `values` and `error` (its message, the field it names) when a submission is shown back with what was wrong. */
export function formBody(
  form: FormPage,
  values: Record<string, string> = {},
  error: { message: string; field: string | undefined } | null = null,
): string {
  const fields = form.fields.map((f) => inputOf(f, values[f.key] ?? '', error?.field === f.key)).join('\n');
  const note = form.doubleOptIn
    ? '<p>We will send you an email with a link to confirm: nothing happens until you do.</p>'
    : '';
  return `${error ? `<p class="error" role="alert" id="form-error">${escapeHtml(error.message)}</p>` : ''}
<form method="post">
${fields}
<div class="hp" aria-hidden="true"><label for="f-hp">Leave this field empty</label><input id="f-hp" type="text" name="${HONEYPOT}" tabindex="-1" autocomplete="off" value=""></div>
<button type="submit">Sign up</button>
</form>
${note}
<p>This page sets no cookie and does not track you.</p>`;
}

/** The answer to every valid submission, whoever the address is. */
export const submittedBody = (status: 'pending_confirmation' | 'subscribed') =>
  status === 'pending_confirmation'
    ? '<p role="status">We sent a message to the address you gave. Open the link in it and press Confirm to finish signing up; the link works for 7 days.</p>'
    : '<p role="status">Thank you: you are signed up.</p>';

/** The Confirm button, after what confirming saves: whoever typed the address chose these values. */
export const confirmBody = (c: Confirmation) =>
  `<p>Sign up ${escapeHtml(maskedAddress(c.email))} for ${escapeHtml(c.formName)}?</p>
${
  c.values.length
    ? `<p>Confirming also saves these details, as they were typed on the form:</p>
<dl>${c.values.map((v) => `<dt>${escapeHtml(v.label)}</dt><dd>${escapeHtml(v.value)}</dd>`).join('')}</dl>
<p>If they are not yours, do not confirm: sign up again with your own.</p>`
    : ''
}
<form method="post"><button type="submit">Confirm</button></form>`;

export const confirmedBody = (c: Confirmation) =>
  `<p role="status">${escapeHtml(maskedAddress(c.email))} is signed up for ${escapeHtml(c.formName)}.</p>${
    c.preferencesUrl
      ? `<p>You can change what you get, or unsubscribe, on <a href="${escapeHtml(c.preferencesUrl)}">your preference page</a>.</p>`
      : ''
  }`;
