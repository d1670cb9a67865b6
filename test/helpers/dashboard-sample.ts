import { freshSqlite, type TestDatabase } from './databases.js';
import { startTestApi, type TestApi } from './api.js';
import type { DnsWorld } from './dns-world.js';
import { startHookWorld } from './hook-world.js';
import { storedEmail } from './fixtures.js';
import { smtpSend } from './smtp-client.js';
import { client, type Client } from './http.js';
import { waitFor } from './wait.js';
import { sampleBroadcasts } from './sample-broadcasts.js';
import { sampleContacts } from './sample-contacts.js';
import { createProject } from '../../src/modules/account/projects/projects.service.js';
import { createKey } from '../../src/modules/account/keys/keys.service.js';
import type { RecipientStatus } from '../../src/modules/sending/emails/email.js';

const SIM = 'simulator.posthorn.test';
const DAY = 86_400_000;

export interface DashboardSample {
  api: TestApi;
  key: string;
  /** the dashboard's pages with sample data, by a short name (the screenshots' file names) */
  pages: Record<string, string>;
  stop(): Promise<void>;
}

/**
 * A running appliance with a project that has a bit of everything: a verified
 * domain with a month of live mail behind its insights, delivered, bounced,
 * ambiguous and scheduled emails, a template with two versions, a webhook
 * endpoint with deliveries, suppressions, received mail and a second key.
 * `npm run screenshots` and the accessibility test look at the same pages.
 */
export async function dashboardSample(): Promise<DashboardSample> {
  const db: TestDatabase = freshSqlite();
  await db.store.migrateLatest();
  const hw = await startHookWorld();
  const { world, hooks } = hw;
  const base = hw.config();
  const api = await startTestApi(
    db.store,
    {
      ...base,
      dns: { ...base.dns, zone: 'dkim.posthorn.example' },
      outbound: { hostname: 'mta.posthorn.example' },
      smtp: { inbound: { enabled: true, host: '127.0.0.1', port: 0 } },
    },
    { roles: { mta: true, webhooks: true, inbound: true, jobs: true } },
  );
  const project = await createProject(api.deps, { name: 'Acme Shop', approved: true });
  const { secret: key } = await createKey(api.deps, { projectId: project.id, mode: 'test', name: 'dashboard' });
  await createKey(api.deps, { projectId: project.id, mode: 'live', name: 'checkout service', scopes: ['emails:send'] });
  const c = client(api.baseUrl, key);

  const domain = await verifiedDomain(c, world, 'acme.example');
  await monthOfLiveMail(db, project.id, 'acme.example');
  const hook = (await c.post('/v1/webhooks', { url: hooks.url('/ok/acme'), description: 'order system' })).body as {
    id: string;
  };
  const order = await send(c, `delivered@${SIM}`, 'Your order #1042 has shipped', { tags: { kind: 'shipping' } });
  await send(c, `bounced@${SIM}`, 'Welcome to Acme');
  await send(c, `ambiguous@${SIM}`, 'Your invoice for November');
  await send(c, `delivered@${SIM}`, 'Your weekly summary', { scheduled_at: new Date(Date.now() + DAY).toISOString() });
  await c.post('/v1/suppressions', { email: 'old-customer@example.net' });
  for (const version of [
    {
      subject: 'Welcome, {{ name }}',
      html: '<h1>Hello {{ name }}</h1><p>Thanks for joining.</p>',
      text: 'Hello {{ name }}',
      variables: { name: { type: 'string', required: true } },
    },
    {
      subject: 'Welcome to Acme, {{ name }}',
      html: '<h1>Hello {{ name }}</h1><p>Thanks for joining the {{ plan }} plan.</p>',
      text: 'Hello {{ name }}',
      variables: { name: { type: 'string', required: true }, plan: { type: 'string', required: true } },
    },
  ]) {
    const r = await c.post('/v1/templates', { id: 'welcome', name: 'Welcome', ...version });
    if (r.status >= 300) throw new Error(`sample template: ${r.status} ${r.text}`);
  }
  await sampleDesign(c);
  const inbound = await receive(api, c, 'support@acme.example');
  await waitFor(async () => (hooks.to('/ok/acme').length >= 4 ? true : null), 15_000, 'the sample webhook deliveries');
  const contactPages = await sampleContacts(c);
  const broadcastPages = await sampleBroadcasts(c);

  return {
    api,
    key,
    pages: {
      'sign-in': '/dashboard/sign-in',
      emails: '/dashboard/emails',
      email: `/dashboard/emails/${order}`,
      domains: '/dashboard/domains',
      domain: `/dashboard/domains/${domain}`,
      'domain-delete': `/dashboard/domains/${domain}/delete`,
      inbound: '/dashboard/inbound',
      'inbound-email': `/dashboard/inbound/${inbound}`,
      templates: '/dashboard/templates',
      template: '/dashboard/templates/welcome',
      'template-new': '/dashboard/templates/+new',
      'template-edit': '/dashboard/templates/welcome/edit',
      'template-design': '/dashboard/templates/spring-sale/edit',
      'template-delete': '/dashboard/templates/welcome/delete',
      webhooks: '/dashboard/webhooks',
      webhook: `/dashboard/webhooks/${hook.id}`,
      'webhook-delete': `/dashboard/webhooks/${hook.id}/delete`,
      suppressions: '/dashboard/suppressions',
      'api-keys': '/dashboard/api-keys',
      usage: '/dashboard/usage',
      // the header's box: what a word finds across kinds
      search: '/dashboard/search?q=welcome',
      ...contactPages,
      ...broadcastPages,
    },
    async stop() {
      await api.stop();
      await hw.stop();
      await db.drop();
    },
  };
}

/** A visual design with a few kinds of block and a condition (the design editor's screenshot). */
async function sampleDesign(c: Client): Promise<void> {
  const r = await c.post('/v1/templates', {
    id: 'spring-sale',
    name: 'Spring sale',
    subject: 'Spring sale, {{ name }}: 20% off',
    variables: { name: {}, vip: { type: 'boolean', required: false } },
    design: {
      accent: '#b4461a',
      blocks: [
        { type: 'logo', url: 'https://acme.example/logo.png', alt: 'Acme' },
        { type: 'heading', text: 'Spring is here, {{ name }}' },
        { type: 'text', text: 'Everything in the garden shop is 20% off until Sunday.' },
        { type: 'discount', code: 'SPRING20', details: 'Valid until Sunday midnight.', when: 'vip == true' },
        { type: 'button', label: 'Shop the sale', url: 'https://acme.example/sale' },
        { type: 'footer', text: 'Acme Shop, 1 Main Street. You get this because you bought from us.' },
      ],
    },
  });
  if (r.status >= 300) throw new Error(`sample design: ${r.status} ${r.text}`);
}

async function send(c: Client, to: string, subject: string, extra: Record<string, unknown> = {}): Promise<string> {
  const html = `<h1 style="font-family:sans-serif">${subject}</h1><p>Hello Jane, thanks for shopping at Acme.</p>`;
  const r = await c.post('/v1/emails', {
    from: 'Acme <orders@acme.example>',
    to: [to],
    subject,
    html,
    text: `${subject}\n\nHello Jane, thanks for shopping at Acme.`,
    ...extra,
  });
  if (r.status !== 202) throw new Error(`sample send: ${r.status} ${r.text}`);
  return r.body.id as string;
}

async function verifiedDomain(c: Client, world: DnsWorld, name: string): Promise<string> {
  const d = (await c.post('/v1/domains', { domain: name })).body as {
    id: string;
    records: Array<{ required: boolean; name: string; type: 'CNAME' | 'MX' | 'TXT'; value: string; purpose: string }>;
  };
  // the DKIM CNAMEs and the return path; DMARC left out, so that insights recommend it
  for (const r of d.records.filter((x) => x.purpose !== 'dmarc')) world.add(r.name, r.type, r.value);
  await c.post(`/v1/domains/${d.id}/verify`);
  return d.id;
}

/** Live mail of the last 30 days, stored directly (live mail would need real receiving servers). */
async function monthOfLiveMail(db: TestDatabase, projectId: string, domain: string): Promise<void> {
  for (let day = 29; day >= 0; day--) {
    const n = 3 + ((day * 7) % 5);
    for (let i = 0; i < n; i++) {
      const status: RecipientStatus = i === 0 && day % 6 === 0 ? 'bounced' : 'delivered';
      const at = Date.now() - day * DAY - i * 60_000;
      const rcpt = [
        {
          id: `rcp_s${day}x${i}${Math.random().toString(36).slice(2, 8)}`,
          address: `customer${i}@example.org`,
          kind: 'to' as const,
          status,
          details: null,
          queueRowId: null,
          delayNotified: false,
          updatedAt: at,
        },
      ];
      await storedEmail(db.store, projectId, {
        environment: 'live',
        fromDomain: domain,
        from: `orders@${domain}`,
        status: 'accepted',
        createdAt: at,
        recipients: rcpt,
      });
    }
  }
}

async function receive(api: TestApi, c: Client, to: string): Promise<string> {
  const raw = [
    'From: Jane Doe <jane@example.org>',
    `To: ${to}`,
    'Subject: Where is my order?',
    'Message-ID: <sample-1@example.org>',
    'MIME-Version: 1.0',
    'Content-Type: multipart/mixed; boundary="b1"',
    '',
    '--b1',
    'Content-Type: text/plain; charset=utf-8',
    '',
    'Hello, my order #1042 has not arrived yet. Could you check?',
    '--b1',
    'Content-Type: text/plain; name="receipt.txt"',
    'Content-Disposition: attachment; filename="receipt.txt"',
    '',
    'Order #1042, 2 items, 39.90 EUR',
    '--b1--',
    '',
  ].join('\r\n');
  const r = await smtpSend(api.running.inboundPort!, { from: 'jane@example.org', to: [to], raw });
  if (!r.ok) throw new Error(`sample inbound: ${r.code} ${r.response}`);
  const list = await waitFor(
    async () => {
      const l = (await c.get('/v1/inbound')).body as { data: Array<{ id: string }> };
      return l.data.length ? l.data : null;
    },
    5000,
    'the received sample mail',
  );
  return list[0].id;
}
