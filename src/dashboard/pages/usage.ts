import { html, type Html } from './html.js';
import { layout } from './layout.js';
import type { Session } from '../../modules/account/sessions/sessions.service.js';

// The API's JSON shape (GET /v1/usage); a limit of 0 means none.
export interface UsageJson {
  sent_today: number;
  sent_this_month: number;
  verifications_used: number;
  limits: { daily: number; monthly: number; domains: number; verifications: number };
}

interface Measure {
  id: string;
  label: string;
  used: number;
  limit: number;
}

export function usagePage(session: Session, u: UsageJson): Html {
  const measures: Measure[] = [
    { id: 'u-today', label: 'Sent today', used: u.sent_today, limit: u.limits.daily },
    { id: 'u-month', label: 'Sent this month', used: u.sent_this_month, limit: u.limits.monthly },
    { id: 'u-verify', label: 'Verifications this month', used: u.verifications_used, limit: u.limits.verifications },
  ];
  return layout(
    { title: 'Usage', section: '/usage', session },
    html`<h1>Usage</h1>
<p class="muted">Live recipients sent (one recipient of one live email counts one; test keys' simulated sends count nothing) and address verifications, per UTC day and month, against this project's limits.</p>
<div class="scroll"><table>
<caption class="visually-hidden">Usage against the project's limits</caption>
<thead><tr><th scope="col">What</th><th scope="col">Used</th><th scope="col">Limit</th><th scope="col">Share of the limit</th></tr></thead>
<tbody>${measures.map(row)}</tbody>
</table></div>
<h2>Sending domains</h2>
<p>${u.limits.domains ? `This project may have at most ${u.limits.domains} sending domain${u.limits.domains === 1 ? '' : 's'}.` : 'This project may have any number of sending domains.'}</p>
<p class="muted">Limits are set by the operator (<code>posthorn project set</code>). When a limit is reached, sends are refused (<code>429 daily_limit_exceeded</code>, <code>429 quota_exhausted</code>) until the next UTC day or month.</p>`,
  );
}

function row(m: Measure): Html {
  const share = m.limit ? Math.min(100, Math.round((m.used / m.limit) * 100)) : null;
  return html`<tr>
  <th scope="row" id="${m.id}">${m.label}</th>
  <td class="used">${m.used}</td>
  <td>${m.limit ? m.limit : html`<span class="muted">no limit</span>`}</td>
  <td>${
    m.limit
      ? html`<meter aria-labelledby="${m.id}" min="0" max="${m.limit}" value="${Math.min(m.used, m.limit)}" low="${m.limit * 0.8}" high="${m.limit * 0.95}" optimum="0">${share}%</meter> ${m.used} of ${m.limit} (${share}%)${m.used >= m.limit ? html` <strong class="error">limit reached</strong>` : ''}`
      : html`<span class="muted">—</span>`
  }</td>
</tr>`;
}
