import { html, type Html } from './html.js';
import { BASE, layout, time } from './layout.js';
import type { Session } from '../../modules/account/sessions/sessions.service.js';
import type { Design } from '../../modules/sending/templates/design/design.schema.js';
import type { Declared } from '../../modules/sending/templates/language/index.js';

// The API's JSON shapes (templates.presenter.ts), as the pages read them.
export interface TemplateSummaryJson {
  id: string;
  name: string;
  latest_version: number;
  versions: number;
  created_at: string;
}

export interface VersionJson {
  template_id: string;
  version: number;
  subject: string;
  html: string | null;
  text: string | null;
  design: Design | null;
  translations: Record<string, { subject?: string; html?: string; text?: string; design?: Design }>;
  variables: Declared;
  restored_from: number | null;
  created_at: string;
}

export interface TemplateJson {
  id: string;
  name: string;
  category: string | null;
  split: Array<{ version: number; percent: number }> | null;
  latest_version: number;
  created_at: string;
  updated_at: string;
  /** newest first */
  versions: VersionJson[];
}

export interface RenderedJson {
  version: number;
  language: string | null;
  subject: string;
  html: string | null;
  text: string | null;
}

export const templateUrl = (id: string, rest = '') => `${BASE}/templates/${encodeURIComponent(id)}${rest}`;

export function templateListPage(session: Session, templates: TemplateSummaryJson[], done?: string): Html {
  return layout(
    { title: 'Templates', section: '/templates', session },
    html`<h1>Templates</h1>
${done === 'deleted' ? html`<p class="note" role="status">Template deleted.</p>` : ''}
<div class="actions"><a href="${BASE}/templates/+design">New design</a><a href="${BASE}/templates/+new">New template from HTML</a></div>
${
  templates.length
    ? html`<div class="scroll"><table>
<caption class="visually-hidden">Templates, newest first</caption>
<thead><tr><th scope="col">Name</th><th scope="col">Id</th><th scope="col">Latest version</th><th scope="col">Created</th></tr></thead>
<tbody>${templates.map((t) => html`<tr><td><a href="${templateUrl(t.id)}">${t.name}</a></td><td><code>${t.id}</code></td><td>${t.latest_version}</td><td>${time(t.created_at)}</td></tr>`)}</tbody>
</table></div>`
    : html`<p class="empty">No templates yet. Start a design, write one in HTML, or publish one with <code>POST /v1/templates</code>.</p>`
}`,
  );
}
