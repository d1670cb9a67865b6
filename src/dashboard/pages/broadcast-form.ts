import { html, type Html } from './html.js';
import { csrfField } from './layout.js';
import { formMessage, invalid, messageFor, type FormError } from './form-errors.js';
import type { Session } from '../../modules/account/sessions/sessions.service.js';

// The /v1/broadcasts shapes as the pages read them.

export interface BroadcastCounts {
  recipients: number;
  sent: number;
  delivered: number;
  bounced: number;
  complained: number;
  opened: number;
  clicked: number;
  unsubscribed: number;
  suppressed: number;
  skipped: number;
  failed: number;
  withdrawn: number;
}

export interface BroadcastJson {
  id: string;
  name: string;
  status: string;
  from: string;
  reply_to: string[] | null;
  subject: string | null;
  html: string | null;
  text: string | null;
  template_id: string | null;
  template_version: number | null;
  audience_id: string | null;
  segment_id: string | null;
  topic_id: string | null;
  environment: string | null;
  scheduled_at: string | null;
  started_at: string | null;
  finished_at: string | null;
  counts: BroadcastCounts;
  last_error: string | null;
  created_at: string;
}

// The compose form of a broadcast: a new draft, and changing a draft (pure).

/** What the form holds: a draft's fields, or what was sent when the API refused them. */
export interface BroadcastFormValues {
  name: string;
  from: string;
  /** comma-separated addresses */
  replyTo: string;
  subject: string;
  templateId: string;
  templateVersion: string;
  html: string;
  text: string;
  /** an audience's or a segment's id: the API's audience_id or segment_id by its prefix */
  target: string;
  topicId: string;
}

/** What the selects offer, read from the API. */
export interface BroadcastChoices {
  templates: Array<{ id: string; name: string; latest_version: number }>;
  audiences: Array<{ id: string; name: string; contact_count?: number }>;
  segments: Array<{ id: string; name: string }>;
  topics: Array<{ id: string; name: string }>;
}

/** The form's fields, which the API's error `field` is matched against (broadcastFieldOf). */
export const BROADCAST_FIELDS = [
  'name',
  'from',
  'reply_to',
  'subject',
  'template_id',
  'template_version',
  'html',
  'text',
  'target',
  'topic_id',
] as const;

/** The form field an API error is about: audience_id and segment_id are both the "Send to" select. */
export function broadcastFieldOf(apiField: string | undefined): string | null {
  const root = apiField?.split(/[.[]/)[0];
  if (root === 'audience_id' || root === 'segment_id') return 'target';
  return root && (BROADCAST_FIELDS as readonly string[]).includes(root) ? root : null;
}

export const EMPTY_BROADCAST: BroadcastFormValues = {
  name: '',
  from: '',
  replyTo: '',
  subject: '',
  templateId: '',
  templateVersion: '',
  html: '',
  text: '',
  target: '',
  topicId: '',
};

/** The fields of a draft (GET /v1/broadcasts/{id}) the form shows. */
type DraftFields = Pick<
  BroadcastJson,
  | 'name'
  | 'from'
  | 'reply_to'
  | 'subject'
  | 'html'
  | 'text'
  | 'template_id'
  | 'template_version'
  | 'audience_id'
  | 'segment_id'
  | 'topic_id'
>;

export function valuesOf(b: DraftFields): BroadcastFormValues {
  return {
    name: b.name,
    from: b.from,
    replyTo: (b.reply_to ?? []).join(', '),
    subject: b.subject ?? '',
    templateId: b.template_id ?? '',
    templateVersion: b.template_version === null ? '' : String(b.template_version),
    html: b.html ?? '',
    text: b.text ?? '',
    target: b.segment_id ?? b.audience_id ?? '',
    topicId: b.topic_id ?? '',
  };
}

/** The form's values from a posted form. */
export function broadcastValues(f: URLSearchParams): BroadcastFormValues {
  const get = (k: string) => f.get(k) ?? '';
  return {
    name: get('name').trim(),
    from: get('from').trim(),
    replyTo: get('reply_to').trim(),
    subject: get('subject'),
    templateId: get('template_id'),
    templateVersion: get('template_version').trim(),
    html: get('html'),
    text: get('text'),
    target: get('target'),
    topicId: get('topic_id'),
  };
}

/**
 * The API's body for the form's values. A blank field is left out of a new
 * draft and taken away (null) from a changed one, so that the API decides
 * what is missing or does not go together (a template and HTML), naming the
 * field.
 */
export function broadcastBody(v: BroadcastFormValues, creating: boolean): Record<string, unknown> {
  const blank = creating ? undefined : null;
  const opt = (s: string) => (s.trim() === '' ? blank : s);
  const version =
    v.templateVersion === ''
      ? blank
      : /^\d{1,15}$/.test(v.templateVersion)
        ? Number(v.templateVersion)
        : v.templateVersion;
  const replyTo = v.replyTo
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const body: Record<string, unknown> = {
    name: v.name,
    from: v.from,
    reply_to: replyTo.length ? replyTo : blank,
    subject: opt(v.subject),
    template_id: opt(v.templateId),
    template_version: version,
    html: opt(v.html),
    text: opt(v.text),
    audience_id: v.target.startsWith('aud_') ? v.target : blank,
    segment_id: v.target.startsWith('seg_') ? v.target : blank,
    topic_id: opt(v.topicId),
  };
  return Object.fromEntries(Object.entries(body).filter(([, x]) => x !== undefined));
}

export interface BroadcastFormOptions {
  action: string;
  submit: string;
  values: BroadcastFormValues;
  choices: BroadcastChoices;
  error?: FormError;
}

const option = (value: string, label: string, current: string) =>
  html`<option value="${value}"${value === current ? html` selected` : ''}>${label}</option>`;

const P = 'b-';

/** Name, sender and audience first, then the content: a template, or HTML and text written here. */
export function broadcastForm(session: Session, o: BroadcastFormOptions): Html {
  const { values: v, error: e, choices: c } = o;
  const field = (name: string) => html`${invalid(e, P, name)}`;
  return html`<form method="post" action="${o.action}" class="settings broadcast-form">
${csrfField(session)}
${formMessage(e)}
<label for="b-name">Name <span class="muted">(yours, not shown to contacts)</span></label>
<input id="b-name" name="name" type="text" required maxlength="200" autocomplete="off" value="${v.name}"${field('name')}>
${messageFor(e, P, 'name')}
<label for="b-from">From</label>
<input id="b-from" name="from" type="text" required maxlength="998" autocomplete="off" spellcheck="false" placeholder="Acme &lt;news@acme.example&gt;" value="${v.from}"${field('from')}>
${messageFor(e, P, 'from')}
<label for="b-reply_to">Reply-To <span class="muted">(optional; several separated by commas)</span></label>
<input id="b-reply_to" name="reply_to" type="text" maxlength="2000" autocomplete="off" spellcheck="false" value="${v.replyTo}"${field('reply_to')}>
${messageFor(e, P, 'reply_to')}
<label for="b-target">Send to</label>
<select id="b-target" name="target"${field('target')}>
${option('', 'Choose an audience or a segment', v.target)}
<optgroup label="Audiences">${c.audiences.map((a) => option(a.id, a.contact_count === undefined ? a.name : `${a.name} (${a.contact_count} contacts)`, v.target))}</optgroup>
<optgroup label="Segments">${c.segments.map((s) => option(s.id, s.name, v.target))}</optgroup>
</select>
${messageFor(e, P, 'target')}
<label for="b-topic_id">Topic <span class="muted">(optional: only contacts subscribed to it)</span></label>
<select id="b-topic_id" name="topic_id"${field('topic_id')}>${option('', 'No topic', v.topicId)}${c.topics.map((t) => option(t.id, t.name, v.topicId))}</select>
${messageFor(e, P, 'topic_id')}
<fieldset><legend>Content</legend>
<p class="muted">Either a template, or a subject with HTML and/or text written here. Both may use <code>{{contact.first_name | there}}</code>, <code>{{contact.email}}</code>, the contact properties and <code>{{preferences_url}}</code>.</p>
<label for="b-template_id">Template</label>
<select id="b-template_id" name="template_id"${field('template_id')}>${option('', 'None: write the content below', v.templateId)}${c.templates.map((t) => option(t.id, `${t.name} (${t.id}, latest version ${t.latest_version})`, v.templateId))}</select>
${messageFor(e, P, 'template_id')}
<label for="b-template_version">Template version <span class="muted">(optional: the latest at each batch if blank)</span></label>
<input id="b-template_version" name="template_version" type="text" inputmode="numeric" autocomplete="off" value="${v.templateVersion}"${field('template_version')}>
${messageFor(e, P, 'template_version')}
<label for="b-subject">Subject</label>
<input id="b-subject" name="subject" type="text" maxlength="998" autocomplete="off" value="${v.subject}"${field('subject')}>
${messageFor(e, P, 'subject')}
<label for="b-html">HTML body</label>
<textarea id="b-html" name="html" rows="8" spellcheck="false"${field('html')}>${v.html}</textarea>
${messageFor(e, P, 'html')}
<label for="b-text">Plain-text body <span class="muted">(optional with HTML: made from it if blank)</span></label>
<textarea id="b-text" name="text" rows="5"${field('text')}>${v.text}</textarea>
${messageFor(e, P, 'text')}
</fieldset>
<button type="submit">${o.submit}</button>
</form>`;
}
