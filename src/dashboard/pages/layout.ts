import { html, type Html } from './html.js';
import type { Session } from '../../modules/account/sessions/sessions.service.js';

export const BASE = '/dashboard';

/** The pages in the navigation, in its order. */
const NAV: Array<{ path: string; label: string }> = [
  { path: '/emails', label: 'Emails' },
  { path: '/domains', label: 'Domains' },
  { path: '/inbound', label: 'Inbound' },
  { path: '/templates', label: 'Templates' },
  { path: '/contacts', label: 'Contacts' },
  { path: '/broadcasts', label: 'Broadcasts' },
  { path: '/webhooks', label: 'Webhooks' },
  { path: '/suppressions', label: 'Suppressions' },
  { path: '/api-keys', label: 'API keys' },
  { path: '/usage', label: 'Usage' },
];

export interface PageOptions {
  title: string;
  /** the navigation entry to mark as current */
  section?: string;
  session: Session | null;
  /** what the header's search box shows (the search page's own query) */
  q?: string;
}

/** The document around a page's content: navigation, the project, sign out. */
export function layout(o: PageOptions, content: Html): Html {
  const s = o.session;
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${o.title} · Posthorn</title>
<link rel="stylesheet" href="${BASE}/assets/dashboard.css">
<script src="${BASE}/assets/dashboard.js" defer></script>
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="top">
  <a class="brand" href="${BASE}/">Posthorn</a>
  ${
    s
      ? html`<nav aria-label="Sections"><ul>${NAV.map((n) => html`<li><a href="${BASE}${n.path}"${n.path === o.section ? html` aria-current="page"` : ''}>${n.label}</a></li>`)}</ul></nav>
  ${searchBox(o.q)}
  <div class="who">
    <span class="project" title="project ${s.principal.project.id}">${s.principal.project.name}</span>
    <span class="key ${s.principal.key.mode}">${s.principal.key.mode} key ${s.principal.key.name ?? s.principal.key.id}</span>
    <form method="post" action="${BASE}/sign-out">${csrfField(s)}<button type="submit" class="link">Sign out</button></form>
  </div>`
      : ''
  }
</header>
<main id="main" tabindex="-1">
${content}
</main>
</body>
</html>`;
}

/** The box in every page's header: a GET form, so that it works without the script. */
function searchBox(q = ''): Html {
  return html`<form class="search" method="get" action="${BASE}/search" role="search" aria-label="Search everything">
  <label for="site-q" class="visually-hidden">Search everything</label>
  <input id="site-q" name="q" type="search" value="${q}" maxlength="320" autocomplete="off" spellcheck="false" placeholder="Email id, address, Message-ID, tag, domain…">
  <button type="submit" class="secondary">Find</button>
</form>`;
}

export function csrfField(s: Session): Html {
  return html`<input type="hidden" name="csrf" value="${s.csrfToken}">`;
}

/** An ISO time as the reader's local time (the script rewrites it), with the UTC value underneath. */
export function time(isoTime: string | null): Html {
  if (!isoTime) return html`<span class="muted">—</span>`;
  return html`<time datetime="${isoTime}">${isoTime
    .replace('T', ' ')
    .replace(/\.\d+Z$/, ' UTC')
    .replace(/Z$/, ' UTC')}</time>`;
}

export function badge(status: string): Html {
  return html`<span class="badge s-${status}">${status.replace(/_/g, ' ')}</span>`;
}

export function errorPage(session: Session | null, status: number, message: string): Html {
  const title =
    status === 404
      ? 'Not found'
      : status === 403
        ? 'Not allowed'
        : status >= 500
          ? 'Something went wrong'
          : 'Cannot do that';
  return layout(
    { title, session },
    html`<h1>${title}</h1><p class="error" role="alert">${message}</p><p><a href="${BASE}/">Back to the dashboard</a></p>`,
  );
}
