import type { Client } from './http.js';

async function made<T = { id: string }>(c: Client, path: string, body: unknown): Promise<T> {
  const r = await c.post(path, body);
  if (r.status >= 300) throw new Error(`sample ${path}: ${r.status} ${r.text}`);
  return r.body as T;
}

/** Contacts, audiences, segments, topics and forms of the dashboard's sample project; their pages by name. */
export async function sampleContacts(c: Client): Promise<Record<string, string>> {
  await made(c, '/v1/contact-properties', { key: 'plan', type: 'string', fallback: 'free' });
  await made(c, '/v1/contact-properties', { key: 'signup_date', type: 'date' });
  await made(c, '/v1/contact-properties', { key: 'vip', type: 'boolean' });
  const news = await made(c, '/v1/topics', {
    name: 'Newsletter',
    description: 'Monthly news',
    default_subscription: 'subscribed',
  });
  await made(c, '/v1/topics', { name: 'Product updates', default_subscription: 'unsubscribed' });
  const readers = await made(c, '/v1/audiences', { name: 'Newsletter readers' });
  const people = [
    {
      email: 'ann@example.com',
      first_name: 'Ann',
      last_name: 'Lee',
      properties: { plan: 'pro', signup_date: '2026-02-01' },
    },
    { email: 'bob@example.org', first_name: 'Bob', properties: { plan: 'free', vip: true } },
    { email: 'carla.longname-with-a-long-address@example.net', unsubscribed: true },
  ];
  const contacts: Array<{ id: string }> = [];
  for (const p of people) contacts.push(await made(c, '/v1/contacts', { ...p, topics: { [news.id]: true } }));
  await made(c, `/v1/audiences/${readers.id}/contacts`, { contact_ids: contacts.slice(0, 2).map((x) => x.id) });
  const pro = await made(c, '/v1/segments', { name: 'Pro customers', filter: "plan == 'pro'" });
  const form = await made(c, '/v1/forms', {
    name: 'The Acme newsletter',
    audience_id: readers.id,
    fields: ['first_name', 'plan'],
    double_opt_in: false,
  });
  return {
    contacts: '/dashboard/contacts',
    contact: `/dashboard/contacts/${contacts[0].id}`,
    'contact-delete': `/dashboard/contacts/${contacts[0].id}/delete`,
    'contacts-import': '/dashboard/contacts/import',
    'contact-properties': '/dashboard/contact-properties',
    audiences: '/dashboard/audiences',
    audience: `/dashboard/audiences/${readers.id}`,
    'audience-delete': `/dashboard/audiences/${readers.id}/delete`,
    segments: '/dashboard/segments',
    segment: `/dashboard/segments/${pro.id}`,
    'segment-delete': `/dashboard/segments/${pro.id}/delete`,
    topics: '/dashboard/topics',
    topic: `/dashboard/topics/${news.id}`,
    'topic-delete': `/dashboard/topics/${news.id}/delete`,
    forms: '/dashboard/forms',
    form: `/dashboard/forms/${form.id}`,
    'form-delete': `/dashboard/forms/${form.id}/delete`,
  };
}
