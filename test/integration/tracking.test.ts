import { expect } from 'chai';
import { simpleParser } from 'mailparser';
import type { TestApi, Tenant } from '../helpers/api.js';
import type { DnsWorld } from '../helpers/dns-world.js';
import type { SmtpSink } from '../helpers/smtp-sink.js';
import { startLiveWorld, verifiedDomain, waitEmail, type LiveWorld } from '../helpers/live.js';
import { waitFor } from '../helpers/wait.js';
import { eventsOfEmail } from '../../src/modules/notifying/events/events.repo.js';

const B64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

describe('open and click tracking', function () {
  this.timeout(30_000);
  let live: LiveWorld;
  let world: DnsWorld;
  let sink: SmtpSink;
  let api: TestApi;
  let t: Tenant;

  before(async function () {
    live = await startLiveWorld('dkim.track.test', 'mta.track.test', {
      http: { public_url: 'https://track.example.test' },
    });
    ({ world, sink, api } = live);
    t = await api.tenant({ mode: 'live' });
  });
  after(async function () {
    await live.stop();
  });

  /** the link at the sink, pointed at this test's API instead of the public URL */
  const local = (url: string) => url.replace('https://track.example.test', api.baseUrl);
  const html =
    '<html><body><p><a href="https://shop.example/order/42?x=1&amp;y=2">Your order</a> <a href="mailto:help@shop.example">help</a> <a href="https://shop.example/no" data-posthorn-notrack>private</a></p></body></html>';

  it('rewrites links and adds a pixel; the click redirects to the original URL and records email.clicked, opens email.opened', async function () {
    const d = await verifiedDomain(t, world, { open_tracking: true, click_tracking: true });
    const to = `reader-${Date.now()}@ok.test`;
    const res = await t.api.post('/v1/emails', {
      from: `a@${d.domain}`,
      to: [to],
      subject: 'Tracked',
      html,
      text: 'x',
    });
    const parsed = await simpleParser((await sink.waitForMessage(to)).raw);
    const body = String(parsed.html);
    const links = [...body.matchAll(/href="([^"]+)"/g)].map((m) => m[1].replace(/&amp;/g, '&'));
    expect(links[0]).to.match(/^https:\/\/track\.example\.test\/t\/c\//);
    expect(links[1]).to.equal('mailto:help@shop.example');
    expect(links[2]).to.equal('https://shop.example/no');
    expect(body).to.not.include('data-posthorn-notrack');
    const pixel = /<img src="(https:\/\/track\.example\.test\/t\/o\/[^"]+)"/.exec(body)![1];

    const click = await fetch(local(links[0]), { redirect: 'manual', headers: { 'user-agent': 'TestMail/1.0' } });
    expect(click.status).to.equal(302);
    expect(click.headers.get('location')).to.equal('https://shop.example/order/42?x=1&y=2');
    const open = await fetch(local(pixel.replace(/&amp;/g, '&')));
    expect(open.status).to.equal(200);
    expect(open.headers.get('content-type')).to.equal('image/gif');

    const events = await waitFor(
      async () => {
        const ev = await eventsOfEmail(api.deps.store.knex, res.body.id);
        return ev.some((e) => e.type === 'email.opened') && ev.some((e) => e.type === 'email.clicked') ? ev : null;
      },
      5000,
      'tracking events',
    );
    const clicked = events.find((e) => e.type === 'email.clicked')!;
    expect(clicked.data.details).to.deep.equal({
      url: 'https://shop.example/order/42?x=1&y=2',
      user_agent: 'TestMail/1.0',
    });
    expect(clicked.recipient).to.equal(to);
    // opens and clicks do not change the status
    const e = await waitEmail(t.api, res.body.id, (x) => x.status === 'accepted');
    expect(e.recipients[0].status).to.equal('delivered');
    const insights = (await t.api.get(`/v1/domains/${d.id}/insights`)).body;
    expect(insights.totals).to.include({ opened: 1, clicked: 1, delivered: 1 });
    expect(insights.rates.opened).to.equal(1);
  });

  it('records no open or click once the domain has turned tracking off, and the link still redirects', async function () {
    const d = await verifiedDomain(t, world, { open_tracking: true, click_tracking: true });
    const to = `later-${Date.now()}@ok.test`;
    const res = await t.api.post('/v1/emails', {
      from: `a@${d.domain}`,
      to: [to],
      subject: 'Tracked',
      html,
      text: 'x',
    });
    const body = String((await simpleParser((await sink.waitForMessage(to)).raw)).html);
    const link = local(/href="(https:\/\/track\.example\.test\/t\/c\/[^"]+)"/.exec(body)![1].replace(/&amp;/g, '&'));
    const pixel = local(
      /<img src="(https:\/\/track\.example\.test\/t\/o\/[^"]+)"/.exec(body)![1].replace(/&amp;/g, '&'),
    );
    expect((await t.api.patch(`/v1/domains/${d.id}`, { open_tracking: false, click_tracking: false })).status).to.equal(
      200,
    );

    const click = await fetch(link, { redirect: 'manual' });
    expect(click.status).to.equal(302);
    expect(click.headers.get('location')).to.equal('https://shop.example/order/42?x=1&y=2');
    expect((await fetch(pixel)).status).to.equal(200);
    // an open recorded now would have been written before the answer: nothing was
    const types = (await eventsOfEmail(api.deps.store.knex, res.body.id)).map((e) => e.type);
    expect(types).to.not.include('email.opened');
    expect(types).to.not.include('email.clicked');

    // turned on again, the same links count again
    expect((await t.api.patch(`/v1/domains/${d.id}`, { open_tracking: true })).status).to.equal(200);
    expect((await fetch(pixel)).status).to.equal(200);
    await waitFor(
      async () =>
        (await eventsOfEmail(api.deps.store.knex, res.body.id)).some((e) => e.type === 'email.opened') ? true : null,
      5000,
      'email.opened',
    );
  });

  it('answers 404 to a tampered token and never redirects elsewhere', async function () {
    const d = await verifiedDomain(t, world, { click_tracking: true });
    const to = `tamper-${Date.now()}@ok.test`;
    await t.api.post('/v1/emails', { from: `a@${d.domain}`, to: [to], subject: 'Tracked', html, text: 'x' });
    const body = String((await simpleParser((await sink.waitForMessage(to)).raw)).html);
    const link = /href="(https:\/\/track\.example\.test\/t\/c\/[^"]+)"/.exec(body)![1];
    const [prefix, mac] = [link.slice(0, link.lastIndexOf('.')), link.slice(link.lastIndexOf('.') + 1)];
    const forged = `${api.baseUrl}/t/c/${Buffer.from(JSON.stringify(['c', 'x', 'y', 'https://evil.example'])).toString('base64url')}.${mac}`;
    for (const url of [forged, local(`${prefix}.AAAA${mac.slice(4)}`), `${api.baseUrl}/t/c/garbage`]) {
      const r = await fetch(url, { redirect: 'manual' });
      expect(r.status, url).to.equal(404);
      expect(r.headers.get('location')).to.equal(null);
    }
    // no pixel when only clicks are tracked
    expect(body).to.not.match(/\/t\/o\//);
  });

  it('answers 404 when the last character of the MAC is spelled differently, though it decodes to the same bytes', async function () {
    const token = await clickToken('same-bytes');
    const alike = `${token.slice(0, -1)}${B64URL[B64URL.indexOf(token.slice(-1)) ^ 1]}`;
    expect(Buffer.from(alike.split('.')[1], 'base64url')).to.deep.equal(Buffer.from(token.split('.')[1], 'base64url'));
    expect((await fetch(`${api.baseUrl}/t/c/${token}`, { redirect: 'manual' })).status).to.equal(302);
    const r = await fetch(`${api.baseUrl}/t/c/${alike}`, { redirect: 'manual' });
    expect(r.status).to.equal(404);
    expect(r.headers.get('location')).to.equal(null);
  });

  it('answers 404 to a click token with any one character changed', async function () {
    const token = await clickToken('any-char');
    for (let i = 0; i < token.length; i++) {
      if (token[i] === '.') continue;
      const changed = `${token.slice(0, i)}${B64URL[(B64URL.indexOf(token[i]) + 1) % 64]}${token.slice(i + 1)}`;
      const r = await fetch(`${api.baseUrl}/t/c/${changed}`, { redirect: 'manual' });
      expect(r.status, `character ${i} of ${token.length}`).to.equal(404);
    }
  });

  /** the token of the first tracked link of a live email with click tracking, as the sink received it */
  async function clickToken(label: string): Promise<string> {
    const d = await verifiedDomain(t, world, { click_tracking: true });
    const to = `${label}-${Date.now()}@ok.test`;
    await t.api.post('/v1/emails', { from: `a@${d.domain}`, to: [to], subject: 'Tracked', html, text: 'x' });
    const body = String((await simpleParser((await sink.waitForMessage(to)).raw)).html);
    return /href="https:\/\/track\.example\.test\/t\/c\/([^"]+)"/.exec(body)![1];
  }

  it('leaves mail alone when tracking is off for the domain', async function () {
    const d = await verifiedDomain(t, world);
    const to = `plain-${Date.now()}@ok.test`;
    await t.api.post('/v1/emails', { from: `a@${d.domain}`, to: [to], subject: 'Plain', html, text: 'x' });
    const body = String((await simpleParser((await sink.waitForMessage(to)).raw)).html);
    expect(body).to.include('href="https://shop.example/order/42?x=1&amp;y=2"');
    expect(body).to.not.include('/t/');
  });
});
