import { html, type Html } from './html.js';
import { csrfField } from './layout.js';
import { formMessage, invalid, messageFor, type FormError } from './form-errors.js';
import type { AudienceJson, PropertyJson } from './contact-shared.js';
import type { Session } from '../../modules/account/sessions/sessions.service.js';

// The settings form of a signup form (making one, changing one), and the HTML snippet that embeds it
// in another site (pure).

export interface SignupFormJson {
  id: string;
  name: string;
  audience_id: string;
  fields: string[];
  double_opt_in: boolean;
  from: string | null;
  confirm_template_id: string | null;
  redirect_url: string | null;
  allowed_origins: string[];
  environment: string;
  url: string | null;
  created_at: string;
}

export interface SignupFormValues {
  name: string;
  audience_id: string;
  fields: string[];
  double_opt_in: boolean;
  from: string;
  confirm_template_id: string;
  redirect_url: string;
  /** one origin a line */
  allowed_origins: string;
}

export const SIGNUP_FORM_FIELDS = [
  'name',
  'audience_id',
  'fields',
  'double_opt_in',
  'from',
  'confirm_template_id',
  'redirect_url',
  'allowed_origins',
] as const;

export const NEW_SIGNUP_FORM: SignupFormValues = {
  name: '',
  audience_id: '',
  fields: ['first_name'],
  double_opt_in: true,
  from: '',
  confirm_template_id: '',
  redirect_url: '',
  allowed_origins: '',
};

export function signupFormValuesOf(f: SignupFormJson): SignupFormValues {
  return {
    name: f.name,
    audience_id: f.audience_id,
    fields: f.fields,
    double_opt_in: f.double_opt_in,
    from: f.from ?? '',
    confirm_template_id: f.confirm_template_id ?? '',
    redirect_url: f.redirect_url ?? '',
    allowed_origins: f.allowed_origins.join('\n'),
  };
}

export function postedSignupForm(f: URLSearchParams): SignupFormValues {
  return {
    name: f.get('name')?.trim() ?? '',
    audience_id: f.get('audience_id') ?? '',
    fields: f.getAll('fields'),
    double_opt_in: f.get('double_opt_in') === 'true',
    from: f.get('from')?.trim() ?? '',
    confirm_template_id: f.get('confirm_template_id')?.trim() ?? '',
    redirect_url: f.get('redirect_url')?.trim() ?? '',
    allowed_origins: f.get('allowed_origins') ?? '',
  };
}

/** The API's body: a blank optional field is none (null). */
export function signupFormBody(v: SignupFormValues) {
  return {
    name: v.name,
    audience_id: v.audience_id,
    fields: ['email', ...v.fields.filter((f) => f !== 'email')],
    double_opt_in: v.double_opt_in,
    from: v.from || null,
    confirm_template_id: v.confirm_template_id || null,
    redirect_url: v.redirect_url || null,
    allowed_origins: v.allowed_origins
      .split(/\s+/)
      .map((o) => o.trim())
      .filter(Boolean),
  };
}

export interface SignupFormOptions {
  action: string;
  submit: string;
  values: SignupFormValues;
  audiences: readonly AudienceJson[];
  properties: readonly PropertyJson[];
  prefix: string;
  error?: FormError;
}

export function signupFormFields(session: Session, o: SignupFormOptions): Html {
  const { values: v, error: e, prefix: p } = o;
  const choices = ['first_name', 'last_name', ...o.properties.map((x) => x.key)];
  const text = (
    name: 'name' | 'from' | 'confirm_template_id' | 'redirect_url',
    label: Html | string,
    extra: Html = html``,
  ) =>
    html`<label for="${p}${name}">${label}</label>
<input id="${p}${name}" name="${name}" autocomplete="off" spellcheck="false" value="${v[name]}"${extra}${invalid(e, p, name)}>
${messageFor(e, p, name)}`;
  return html`<form method="post" action="${o.action}" class="settings">
${csrfField(session)}
${formMessage(e)}
${text('name', 'Form title', html` required maxlength="200"`)}
<label for="${p}audience_id">Audience that signups join</label>
<select id="${p}audience_id" name="audience_id" required${invalid(e, p, 'audience_id')}><option value="">(choose one)</option>${o.audiences.map((a) => html`<option value="${a.id}"${a.id === v.audience_id ? html` selected` : ''}>${a.name}</option>`)}</select>
${messageFor(e, p, 'audience_id')}
<fieldset${e?.field === 'fields' ? html` aria-describedby="${p}fields-error"` : ''}><legend>Fields asked for besides the address</legend>
${messageFor(e, p, 'fields')}
${choices.map((c) => html`<label class="check" for="${p}field-${c}"><input type="checkbox" id="${p}field-${c}" name="fields" value="${c}"${v.fields.includes(c) ? html` checked` : ''}> ${c}</label>`)}
</fieldset>
<label class="check" for="${p}double_opt_in"><input type="checkbox" id="${p}double_opt_in" name="double_opt_in" value="true"${v.double_opt_in ? html` checked` : ''}${invalid(e, p, 'double_opt_in')}> Double opt-in: join only after confirming by the link mailed</label>
${messageFor(e, p, 'double_opt_in')}
${text('from', html`Confirmation mail From <span class="muted">(an address at a domain of the project; needed with double opt-in)</span>`, html` maxlength="998"`)}
${text('confirm_template_id', html`Confirmation template id <span class="muted">(optional: a built-in message otherwise)</span>`)}
${text('redirect_url', html`After signing up, send to <span class="muted">(optional https URL)</span>`, html` type="url" inputmode="url"`)}
<label for="${p}allowed_origins">Sites that may post to it <span class="muted">(optional: one origin a line, https://shop.example)</span></label>
<textarea id="${p}allowed_origins" name="allowed_origins" rows="2" spellcheck="false"${invalid(e, p, 'allowed_origins')}>${v.allowed_origins}</textarea>
${messageFor(e, p, 'allowed_origins')}
<button type="submit">${o.submit}</button>
</form>`;
}

const LABELS: Record<string, string> = { email: 'Email', first_name: 'First name', last_name: 'Last name' };
const AUTOCOMPLETE: Record<string, string> = { email: 'email', first_name: 'given-name', last_name: 'family-name' };

/**
 * An HTML form another site can paste: it posts to the form's address as the form's own page does,
 * with the honeypot field that refuses bots kept out of sight and out of reach.
 */
export function embedSnippet(url: string, fields: readonly string[], properties: readonly PropertyJson[]): string {
  const types = new Map(properties.map((p) => [p.key, p.type]));
  const input = (f: string): string => {
    const id = `posthorn-${f}`;
    const type =
      f === 'email' ? 'email' : types.get(f) === 'number' ? 'number' : types.get(f) === 'date' ? 'date' : 'text';
    if (types.get(f) === 'boolean') return `  <label><input type="checkbox" name="${f}" value="true"> ${f}</label>`;
    const auto = AUTOCOMPLETE[f] ? ` autocomplete="${AUTOCOMPLETE[f]}"` : '';
    return `  <label for="${id}">${LABELS[f] ?? f}</label>\n  <input id="${id}" name="${f}" type="${type}"${auto}${f === 'email' ? ' required' : ''}>`;
  };
  return [
    `<form action="${url.replace(/&/g, '&amp;').replace(/"/g, '&quot;')}" method="post">`,
    ...fields.map(input),
    '  <div style="position:absolute;left:-10000px" aria-hidden="true">',
    '    <input name="your-website" tabindex="-1" autocomplete="off">',
    '  </div>',
    '  <button type="submit">Sign up</button>',
    '</form>',
  ].join('\n');
}
