import { html, type Html } from './html.js';
import { field } from './design-blocks.js';
import { formMessage, type FormError } from './form-errors.js';
import { BASE, csrfField, layout } from './layout.js';
import { templateUrl, type TemplateJson } from './templates.js';
import type { Session } from '../../modules/account/sessions/sessions.service.js';
import { sampleFor } from './template-draft.js';

// What a template's page lets a user do besides previewing: publish a new version, split sends
// between versions, send a test email, delete the template (after a confirmation).

const SPLIT_ROWS = 5;

/** The test form as typed (shown again when the send is refused). */
export interface TestSendValues {
  from: string;
  to: string;
  version: string;
  language: string;
  variables: string;
}

export interface ActionsState {
  split?: { error: FormError; rows: Array<{ version: string; percent: string }> };
  test?: { values: TestSendValues; error: FormError };
}

export function templateActions(session: Session, t: TemplateJson, s: ActionsState): Html {
  const latest = t.versions[0];
  return html`<div class="actions">
<a href="${templateUrl(t.id, '/edit')}">Publish a new version</a>
${latest.design ? html`<a href="${templateUrl(t.id, '/edit?mode=source')}">New version from HTML</a>` : html`<a href="${templateUrl(t.id, '/edit?mode=design')}">New version as a design</a>`}
<a class="button-link" href="${templateUrl(t.id, '/delete')}">Delete template</a>
</div>
${splitForm(session, t, s.split)}
${testForm(session, t, s.test)}`;
}

function splitForm(session: Session, t: TemplateJson, state: ActionsState['split']): Html {
  const rows = state?.rows ?? (t.split ?? []).map((x) => ({ version: String(x.version), percent: String(x.percent) }));
  const all = Array.from({ length: SPLIT_ROWS }, (_, i) => rows[i] ?? { version: '', percent: '' });
  const versions = ['', ...t.versions.map((v) => String(v.version))];
  return html`<section aria-labelledby="h-split">
<h2 id="h-split">Split traffic</h2>
<p class="muted">Sends that name no version are split between the versions below by percent (2 to 5 versions, adding up to 100); a recipient always gets the same version. ${t.split ? 'The split is on.' : 'The split is off: sends get the latest version.'}</p>
<form method="post" action="${templateUrl(t.id, '/split')}" class="card">
${csrfField(session)}
${state ? html`<p class="error" role="alert" id="split-error">${state.error.message}</p>` : ''}
${all.map(
  (r, i) => html`<div class="row-group inline">
<div class="field"><label for="split-v${i}">Version of share ${i + 1}</label><select id="split-v${i}" name="version${i}"${state ? html` aria-describedby="split-error"` : ''}>${versions.map((v) => html`<option value="${v}"${v === r.version ? html` selected` : ''}>${v || '—'}</option>`)}</select></div>
<div class="field"><label for="split-p${i}">Percent of share ${i + 1}</label><input id="split-p${i}" name="percent${i}" inputmode="numeric" value="${r.percent}"></div>
</div>`,
)}
<div class="actions"><button type="submit" name="op" value="save">Save split</button>${t.split ? html`<button type="submit" name="op" value="off" class="secondary">Turn the split off</button>` : ''}</div>
</form>
</section>`;
}

function testForm(session: Session, t: TemplateJson, state: ActionsState['test']): Html {
  const latest = t.versions[0];
  const v = state?.values ?? {
    from: '',
    to: '',
    version: String(latest.version),
    language: '',
    variables: sampleFor(latest.variables),
  };
  const e = state?.error;
  return html`<section aria-labelledby="h-test">
<h2 id="h-test">Send a test</h2>
<p class="muted">Sends one email from this template through POST /v1/emails, as your code would: it shows in Emails. With a test key it is accepted and never delivered.</p>
<form method="post" action="${templateUrl(t.id, '/test')}" class="card settings">
${csrfField(session)}
${formMessage(e)}
${field('from', 'From address', v.from, e, { hint: 'an address at one of your verified domains' })}
${field('to', 'To address', v.to, e)}
${field('template_version', 'Version to send', v.version, e, { kind: 'choice', choices: t.versions.map((x) => String(x.version)) })}
${field('language', 'Translation to send', v.language, e, { hint: 'optional: a language tag, e.g. de' })}
${field('variables', 'Variables', v.variables, e, { kind: 'lines', rows: 5, hint: 'JSON, as a send gives them' })}
<button type="submit">Send test email</button>
</form>
</section>`;
}

export function deleteTemplatePage(session: Session, t: TemplateJson): Html {
  return layout(
    { title: `Delete ${t.name}`, section: '/templates', session },
    html`<p class="crumbs"><a href="${BASE}/templates">Templates</a> › <a href="${templateUrl(t.id)}">${t.name}</a></p>
<h1>Delete ${t.name}?</h1>
<p>All ${t.versions.length} version${t.versions.length === 1 ? '' : 's'} of <code>${t.id}</code> are deleted. Emails sent from it keep their content; <strong>sends that name <code>${t.id}</code> are refused from then on</strong>, so change your code first.</p>
<form method="post" action="${templateUrl(t.id, '/delete')}" class="actions">
${csrfField(session)}
<button type="submit" class="danger">Delete template</button>
<a href="${templateUrl(t.id)}">Keep it</a>
</form>`,
  );
}
