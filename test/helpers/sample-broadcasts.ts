import type { Client } from './http.js';

async function made<T = { id: string }>(c: Client, path: string, body: unknown): Promise<T> {
  const r = await c.post(path, body);
  if (r.status >= 300) throw new Error(`sample ${path}: ${r.status} ${r.text}`);
  return r.body as T;
}

const SIM = 'simulator.posthorn.test';

/**
 * Broadcasts of the dashboard's sample project, with an audience of their own
 * (a reader, a bounce and a delivery at the simulator): a draft with a test
 * email sent of it, a sent one and its report. Their pages by name.
 */
export async function sampleBroadcasts(c: Client): Promise<Record<string, string>> {
  const audience = await made(c, '/v1/audiences', { name: 'Winter sale list' });
  const contacts: Array<{ id: string }> = [];
  for (const p of [
    { email: 'dora@shoppers.example', first_name: 'Dora' },
    { email: `bounced@${SIM}` },
    { email: `delivered@${SIM}`, first_name: 'Dev' },
  ])
    contacts.push(await made(c, '/v1/contacts', p));
  await made(c, `/v1/audiences/${audience.id}/contacts`, { contact_ids: contacts.map((x) => x.id) });
  const content = {
    from: 'Acme <news@acme.example>',
    subject: 'The winter sale starts, {{contact.first_name | there}}',
    html: '<h1 style="font-family:sans-serif">Hello {{contact.first_name | there}}</h1><p>Everything is 20% off this week.</p><p><a href="{{preferences_url}}">Email preferences</a></p>',
    audience_id: audience.id,
  };
  const draft = await made(c, '/v1/broadcasts', { name: 'Winter sale', ...content });
  await made(c, `/v1/broadcasts/${draft.id}/test`, { to: `delivered@${SIM}`, contact_id: contacts[0].id });
  const sent = await made(c, '/v1/broadcasts', { name: 'Autumn news', ...content, subject: 'Autumn at Acme' });
  await made(c, `/v1/broadcasts/${sent.id}/send`, {});
  return {
    broadcasts: '/dashboard/broadcasts',
    'broadcast-new': '/dashboard/broadcasts/new',
    'broadcast-draft': `/dashboard/broadcasts/${draft.id}`,
    'broadcast-edit': `/dashboard/broadcasts/${draft.id}/edit`,
    'broadcast-delete': `/dashboard/broadcasts/${draft.id}/delete`,
    broadcast: `/dashboard/broadcasts/${sent.id}`,
    'broadcast-report': `/dashboard/broadcasts/${sent.id}/report`,
  };
}
