import { expect } from 'chai';
import type { Client } from './http.js';
import type { SinkMessage } from './smtp-sink.js';
import { waitFor } from './wait.js';

/** `n` contacts c<i>-<tag>@ok.test (first name N<i>) in a new audience; its id. */
export async function audienceOf(api: Client, tag: string, n: number): Promise<string> {
  const audience = (await api.post('/v1/audiences', { name: tag })).body.id as string;
  const emails = Array.from({ length: n }, (_, i) => `c${i}-${tag}@ok.test`);
  for (let i = 0; i < n; i += 50) {
    const created = await Promise.all(
      emails
        .slice(i, i + 50)
        .map((email) => api.post('/v1/contacts', { email, first_name: `N${emails.indexOf(email)}` })),
    );
    for (const c of created) expect(c.status, c.text).to.equal(201);
    const added = await api.post(`/v1/audiences/${audience}/contacts`, { contact_ids: created.map((c) => c.body.id) });
    expect(added.status, added.text).to.be.oneOf([200, 201]);
  }
  return audience;
}

/** Sends a one-line broadcast from `from` to an audience; its id. */
export async function sendBroadcast(api: Client, from: string, audience: string): Promise<string> {
  const b = await api.post('/v1/broadcasts', {
    name: 'News',
    from,
    subject: 'News',
    html: '<p>News</p>',
    audience_id: audience,
  });
  expect(b.status, b.text).to.equal(201);
  const sent = await api.post(`/v1/broadcasts/${b.body.id}/send`, {});
  expect(sent.status, sent.text).to.equal(200);
  return b.body.id as string;
}

/** The broadcast once its status is `sent`. */
export const sentOf = (api: Client, id: string, ms: number) =>
  waitFor(
    async () => {
      const b = (await api.get(`/v1/broadcasts/${id}`)).body;
      return b.status === 'sent' ? b : null;
    },
    ms,
    `broadcast ${id} sent`,
  );

/** How many messages each address got at the sink. */
export function copies(messages: SinkMessage[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const m of messages) for (const r of m.envelope.to) out.set(r, (out.get(r) ?? 0) + 1);
  return out;
}
