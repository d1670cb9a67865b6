import { expect } from 'chai';
import { once } from 'node:events';
import type { Readable } from 'node:stream';
import { silentLogger } from '../../src/log/logger.js';
import { ListenHub } from '../../src/modules/webhooks/listen-hub.js';
import { EventStreamReader, eventFrame, listenEndpointOf, listenUrl, type ListenFrame } from '../../src/modules/webhooks/listen-stream.js';
import { apiKeyFrom, apiUrlFrom, errorFromAnswer } from '../../src/cli/api-client.js';
import { CliError } from '../../src/cli/base.js';
import { eventLine, jsonLine } from '../../src/cli/commands/listen.js';

const frame = (body: unknown, extra: Record<string, string> = {}): ListenFrame => ({
  headers: { 'Content-Type': 'application/json', 'Service-Event-Id': 'evt_1', 'Service-Delivery-Attempt': '1', ...extra },
  body: typeof body === 'string' ? body : JSON.stringify(body),
});

/** What a stream has written so far, as text. */
function collect(stream: Readable): () => string {
  let text = '';
  stream.on('data', (d: Buffer) => (text += d.toString('utf8')));
  return () => text;
}

const tick = () => new Promise((r) => setImmediate(r));

describe('posthorn listen: the stream format (listen-stream.ts)', function () {
  it('names the endpoint in its marker url, and nothing else is one', function () {
    expect(listenUrl('whe_1')).to.equal('posthorn-listen:whe_1');
    expect(listenEndpointOf('posthorn-listen:whe_1')).to.equal('whe_1');
    expect(listenEndpointOf('https://hooks.example.com/posthorn-listen:whe_1')).to.equal(null);
  });

  it('reads back what it writes, however the bytes are cut, a body with line breaks and non-ASCII text included', function () {
    const sent = [frame({ type: 'email.sent', text: 'line 1\nline 2\r\n' }), frame({ type: 'email.delivered', subject: 'Grüße 👋' })];
    const wire = `: listening: whe_1\n\n${sent.map(eventFrame).join(': heartbeat\n\n')}`;
    for (const size of [1, 2, 7, wire.length]) {
      const reader = new EventStreamReader();
      const got: ListenFrame[] = [];
      for (let i = 0; i < wire.length; i += size) got.push(...reader.push(wire.slice(i, i + size)));
      expect(got, `chunks of ${size}`).to.deep.equal(sent);
    }
  });

  it('takes CRLF and CR line ends, a CRLF cut between two chunks included', function () {
    const reader = new EventStreamReader();
    const json = JSON.stringify(frame({ id: 'evt_1' }));
    expect(reader.push(`data: ${json}\r`)).to.deep.equal([]);
    expect(reader.push('\n\r')).to.deep.equal([]);
    expect(reader.push('\n')).to.deep.equal([frame({ id: 'evt_1' })]);
    expect(reader.push(`data:${json}\r\r\n`)).to.deep.equal([frame({ id: 'evt_1' })]);
  });

  it('skips comments, other fields and data that is not a frame', function () {
    const reader = new EventStreamReader();
    expect(reader.push(': hello\n\nevent: x\nid: 3\nretry: 10\n\ndata: not json\n\ndata: {"body": 1}\n\n')).to.deep.equal([]);
  });
});

describe('posthorn listen: the hub of open streams (listen-hub.ts)', function () {
  let hub: ListenHub;
  beforeEach(() => {
    hub = new ListenHub(silentLogger(), 20);
  });
  afterEach(async () => {
    await hub.close();
  });

  it('writes a delivery to the endpoint\'s stream, and refuses one for an endpoint not connected here', async function () {
    const stream = hub.connect('whe_1', async () => undefined)!;
    const text = collect(stream);
    expect(hub.deliver('whe_1', frame({ id: 'evt_1' }))).to.equal(true);
    expect(hub.deliver('whe_2', frame({ id: 'evt_2' }))).to.equal(false);
    expect(await hub.sink('whe_2', frame({ id: 'evt_2' }))).to.equal(false);
    await tick();
    expect(text()).to.match(/^: listening: whe_1\n\n/);
    expect(new EventStreamReader().push(text())).to.deep.equal([frame({ id: 'evt_1' })]);
  });

  it('takes one stream per endpoint', function () {
    expect(hub.connect('whe_1', async () => undefined)).to.not.equal(null);
    expect(hub.connect('whe_1', async () => undefined)).to.equal(null);
  });

  it('runs onClosed when the stream goes (the client left), and delivers nothing there after', async function () {
    let closed = 0;
    const stream = hub.connect('whe_1', async () => void closed++)!;
    stream.destroy();
    await once(stream, 'close');
    await tick();
    expect(closed).to.equal(1);
    expect(hub.connected('whe_1')).to.equal(false);
    expect(hub.deliver('whe_1', frame({}))).to.equal(false);
  });

  it('sends a comment heartbeat while a stream is open', async function () {
    const text = collect(hub.connect('whe_1', async () => undefined)!);
    await new Promise((r) => setTimeout(r, 70));
    expect(text().match(/: heartbeat\n\n/g)?.length ?? 0).to.be.at.least(2);
  });

  it('on close ends every stream, waits for their onClosed, and takes no new one', async function () {
    const deleted: string[] = [];
    const onClosed = (id: string) => async () => {
      await new Promise((r) => setTimeout(r, 10));
      deleted.push(id);
    };
    const a = hub.connect('whe_a', onClosed('whe_a'))!;
    collect(a);
    // one nobody reads: cut after the grace period
    hub.connect('whe_b', onClosed('whe_b'));
    await hub.close();
    expect(deleted.sort()).to.deep.equal(['whe_a', 'whe_b']);
    expect(hub.closing).to.equal(true);
    expect(hub.connect('whe_c', async () => undefined)).to.equal(null);
  });

  it('ends a stream whose endpoint was deleted', async function () {
    const stream = hub.connect('whe_1', async () => undefined)!;
    collect(stream);
    hub.disconnect('whe_1');
    await once(stream, 'close');
    expect(hub.connected('whe_1')).to.equal(false);
  });
});

describe('posthorn listen: the CLI side (api-client.ts, commands/listen.ts)', function () {
  const http = (publicUrl: string | null, host = '127.0.0.1', port = 8025) => () => ({ http: { host, port, publicUrl } });

  it('takes the key from --key, else POSTHORN_KEY, and names both when there is none', function () {
    expect(apiKeyFrom('ph_test_a', { POSTHORN_KEY: 'ph_test_b' })).to.equal('ph_test_a');
    expect(apiKeyFrom(undefined, { POSTHORN_KEY: 'ph_test_b' })).to.equal('ph_test_b');
    const err = (() => {
      try {
        apiKeyFrom(undefined, {});
      } catch (e) {
        return e as CliError;
      }
      return null;
    })();
    expect(err).to.be.instanceOf(CliError);
    expect(err!.message).to.include('--key').and.include('POSTHORN_KEY');
  });

  it('takes the API URL from --api-url, POSTHORN_API_URL, then http.host:http.port (not http.public_url)', function () {
    const unused = () => {
      throw new Error('the config is not read when a URL is given');
    };
    expect(apiUrlFrom('http://10.0.0.1:9000/', { POSTHORN_API_URL: 'http://b' }, unused)).to.equal('http://10.0.0.1:9000');
    expect(apiUrlFrom(undefined, { POSTHORN_API_URL: 'https://mail.example.com/posthorn/' }, unused)).to.equal('https://mail.example.com/posthorn');
    expect(apiUrlFrom(undefined, {}, http('https://mail.example.com', '127.0.0.1', 9100))).to.equal('http://127.0.0.1:9100');
    expect(apiUrlFrom(undefined, {}, http(null, '10.1.2.3', 9000))).to.equal('http://10.1.2.3:9000');
    expect(apiUrlFrom(undefined, {}, http(null, '0.0.0.0'))).to.equal('http://127.0.0.1:8025');
    expect(apiUrlFrom(undefined, {}, http(null, '::'))).to.equal('http://127.0.0.1:8025');
    expect(apiUrlFrom(undefined, {}, http(null, '::1'))).to.equal('http://[::1]:8025');
    expect(() => apiUrlFrom('localhost:8025', {}, unused)).to.throw(CliError, /--api-url/);
  });

  it("turns the API's error body into a CliError with its code and message", function () {
    const e = errorFromAnswer(404, { error: { code: 'not_found', message: 'webhook endpoint whe_1 not found' }, request_id: 'req_1' });
    expect([e.code, e.message]).to.deep.equal(['not_found', 'webhook endpoint whe_1 not found']);
    expect(errorFromAnswer(502, undefined).message).to.include('502');
  });

  it('prints one line per event: time, type, email, recipient and the local app\'s answer', function () {
    const f = frame({ id: 'evt_1', type: 'email.delivered', created_at: '2026-11-29T11:23:15.234Z', data: { email_id: 'msg_1', recipient: 'delivered@simulator.posthorn.test' } });
    expect(eventLine(f, null)).to.match(/^2026-11-29T11:23:15\.234Z {2}email\.delivered +msg_1 {2}delivered@simulator\.posthorn\.test$/);
    expect(eventLine(f, { status: 204, error: null, durationMs: 3 })).to.match(/ → 204 \(3 ms\)$/);
    expect(eventLine(f, { status: null, error: 'ECONNREFUSED', durationMs: 1 })).to.match(/ → error: ECONNREFUSED$/);
    expect(eventLine(frame({ type: 'domain.blocklisted', created_at: 'x', data: {} }), null)).to.match(/domain\.blocklisted +- {2}-$/);
  });

  it('with --json: the payload, its headers, and the forward when there was one', function () {
    const f = frame({ id: 'evt_1', type: 'email.sent' });
    expect(jsonLine(f, null, null)).to.deep.equal({ headers: f.headers, payload: { id: 'evt_1', type: 'email.sent' } });
    expect(jsonLine(f, 'http://localhost:3000/hook', { status: 500, error: null, durationMs: 4 }).forward).to.deep.equal({ url: 'http://localhost:3000/hook', status: 500, error: null, duration_ms: 4 });
  });
});
