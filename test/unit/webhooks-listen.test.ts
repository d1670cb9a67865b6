import { expect } from 'chai';
import { once } from 'node:events';
import type { Readable } from 'node:stream';
import { silentLogger } from '../../src/log/logger.js';
import {
  LISTEN_FAILURES,
  ListenHub,
  MAX_BUFFERED_BYTES,
  type Connected,
} from '../../src/modules/notifying/webhooks/listen-hub.js';
import {
  endFrame,
  EventStreamReader,
  eventFrame,
  listenEndpointOf,
  listenUrl,
  type ListenEnd,
  type ListenFrame,
  type ListenOutcome,
} from '../../src/modules/notifying/webhooks/listen-stream.js';
import { answerListen, ListenRelay, type ListenAsk } from '../../src/roles/listen-relay.js';
import { apiKeyFrom, apiUrlFrom, errorFromAnswer } from '../../src/cli/api-client.js';
import { CliError } from '../../src/cli/base.js';
import { streamEnded } from '../../src/cli/commands/listen.js';
import { forwardUrl } from '../../src/cli/listen-forward.js';
import { eventLine, jsonLine } from '../../src/cli/listen-output.js';
import { waitFor } from '../helpers/wait.js';

const frame = (body: unknown, extra: Record<string, string> = {}): ListenFrame => ({
  headers: {
    'Content-Type': 'application/json',
    'Service-Event-Id': 'evt_1',
    'Service-Delivery-Attempt': '1',
    ...extra,
  },
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
    const sent = [
      frame({ type: 'email.sent', text: 'line 1\nline 2\r\n' }),
      frame({ type: 'email.delivered', subject: 'Grüße 👋' }),
    ];
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
    expect(
      reader.push(': hello\n\nevent: x\nid: 3\nretry: 10\n\ndata: not json\n\ndata: {"body": 1}\n\n'),
    ).to.deep.equal([]);
    expect(reader.ended).to.equal(null);
  });

  it('keeps the reason of the end comment, and no unknown one', function () {
    const reader = new EventStreamReader();
    reader.push(`: end: nonsense\n\n${eventFrame(frame({ id: 'evt_1' }))}`);
    expect(reader.ended).to.equal(null);
    expect(reader.push(endFrame('endpoint_deleted'))).to.deep.equal([]);
    expect(reader.ended).to.equal('endpoint_deleted');
  });
});

describe('posthorn listen: the hub of open streams (listen-hub.ts)', function () {
  let hub: ListenHub;
  beforeEach(() => {
    hub = new ListenHub(silentLogger(), { heartbeatMs: 20, connectWithinMs: 30 });
  });
  afterEach(async () => {
    await hub.close();
  });

  /** A session whose stream may stay open (or end for `reason` from now on); `closed` counts its onClosed. */
  function session(onClosed: () => Promise<void> = async () => undefined) {
    const s = { reason: null as ListenEnd | null, closed: 0 };
    return {
      state: s,
      onClosed: async () => {
        await onClosed();
        s.closed++;
      },
      recheck: async () => s.reason,
    };
  }
  const streamOf = (c: Connected): Readable => {
    if (c.kind !== 'connected') throw new Error(`not connected: ${c.kind}`);
    return c.stream;
  };

  it("writes a delivery to the endpoint's stream, and refuses one for an endpoint not connected here", async function () {
    const stream = streamOf(hub.connect('whe_1', session()));
    const text = collect(stream);
    expect(hub.deliver('whe_1', frame({ id: 'evt_1' }))).to.equal('written');
    expect(hub.deliver('whe_2', frame({ id: 'evt_2' }))).to.equal('not_connected');
    expect(await hub.sink('whe_2', frame({ id: 'evt_2' }))).to.equal('not_connected');
    await tick();
    expect(text()).to.match(/^: listening: whe_1\n\n/);
    expect(new EventStreamReader().push(text())).to.deep.equal([frame({ id: 'evt_1' })]);
  });

  it('takes one stream per endpoint', function () {
    expect(hub.connect('whe_1', session()).kind).to.equal('connected');
    expect(hub.connect('whe_1', session()).kind).to.equal('taken');
  });

  it('takes no more streams than maxStreams', async function () {
    const small = new ListenHub(silentLogger(), { maxStreams: 2 });
    try {
      const kinds = ['whe_1', 'whe_2', 'whe_3'].map((id) => {
        const c = small.connect(id, session());
        if (c.kind === 'connected') collect(c.stream);
        return c.kind;
      });
      expect(kinds).to.deep.equal(['connected', 'connected', 'full']);
    } finally {
      await small.close();
    }
  });

  context(`when the reader is more than MAX_BUFFERED_BYTES (${MAX_BUFFERED_BYTES}) behind`, function () {
    it('refuses the delivery as behind, with an error of its own, and takes it again once the reader has caught up', async function () {
      const stream = streamOf(hub.connect('whe_1', session()));
      const big = frame('x'.repeat(256 * 1024));
      const outcomes: ListenOutcome[] = [];
      while (outcomes.at(-1) !== 'behind' && outcomes.length < 100) outcomes.push(hub.deliver('whe_1', big));
      expect(outcomes.at(-1)).to.equal('behind');
      // nobody reads: what was written is buffered, up to the cap and one frame beyond
      expect(outcomes.length - 1).to.be.at.least(Math.floor(MAX_BUFFERED_BYTES / eventFrame(big).length));
      expect(LISTEN_FAILURES.behind).to.equal(
        'the posthorn listen connection is more than 4 MiB behind; the event is retried',
      );
      expect(LISTEN_FAILURES.not_connected).to.equal('no posthorn listen is connected to this endpoint');
      collect(stream);
      await waitFor(
        async () => hub.deliver('whe_1', frame({ id: 'evt_2' })) === 'written',
        2_000,
        'the reader to catch up',
      );
    });
  });

  it('runs onClosed when the stream goes (the client left), and delivers nothing there after', async function () {
    const s = session();
    const stream = streamOf(hub.connect('whe_1', s));
    stream.destroy();
    await once(stream, 'close');
    await tick();
    expect(s.state.closed).to.equal(1);
    expect(hub.connected('whe_1')).to.equal(false);
    expect(hub.deliver('whe_1', frame({}))).to.equal('not_connected');
  });

  it('sends a comment heartbeat while a stream is open', async function () {
    const text = collect(streamOf(hub.connect('whe_1', session())));
    await new Promise((r) => setTimeout(r, 70));
    expect(text().match(/: heartbeat\n\n/g)?.length ?? 0).to.be.at.least(2);
  });

  it('ends a stream at the first heartbeat whose recheck gives a reason, the reason as its last line, and runs onClosed', async function () {
    const s = session();
    const stream = streamOf(hub.connect('whe_1', s));
    const text = collect(stream);
    await new Promise((r) => setTimeout(r, 50));
    expect(hub.connected('whe_1')).to.equal(true);
    s.state.reason = 'key_revoked';
    await once(stream, 'close');
    await tick();
    expect(text()).to.match(/: end: key_revoked\n\n$/);
    const reader = new EventStreamReader();
    reader.push(text());
    expect(reader.ended).to.equal('key_revoked');
    expect(s.state.closed).to.equal(1);
  });

  it('keeps a stream whose recheck fails (the database did not answer): checked again at the next heartbeat', async function () {
    const stream = streamOf(
      hub.connect('whe_1', {
        onClosed: async () => undefined,
        recheck: () => Promise.reject(new Error('database down')),
      }),
    );
    collect(stream);
    await new Promise((r) => setTimeout(r, 70));
    expect(hub.connected('whe_1')).to.equal(true);
  });

  it('on close ends every stream, waits for their onClosed, and takes no new one', async function () {
    const deleted: string[] = [];
    const onClosed = (id: string) => async () => {
      await new Promise((r) => setTimeout(r, 10));
      deleted.push(id);
    };
    const a = streamOf(hub.connect('whe_a', session(onClosed('whe_a'))));
    const text = collect(a);
    // one nobody reads: cut after the grace period
    hub.connect('whe_b', session(onClosed('whe_b')));
    await hub.close();
    expect(deleted.sort()).to.deep.equal(['whe_a', 'whe_b']);
    expect(text()).to.match(/: end: server_stopping\n\n$/);
    expect(hub.closing).to.equal(true);
    expect(hub.connect('whe_c', session()).kind).to.equal('closing');
  });

  it('ends a stream whose endpoint was deleted, saying so in its last line', async function () {
    const stream = streamOf(hub.connect('whe_1', session()));
    const text = collect(stream);
    hub.disconnect('whe_1');
    await once(stream, 'close');
    expect(hub.connected('whe_1')).to.equal(false);
    expect(text()).to.match(/: end: endpoint_deleted\n\n$/);
  });

  context('an endpoint created here', function () {
    it('is deleted once connectWithinMs has passed without its stream', async function () {
      const expired: string[] = [];
      hub.expectStream('whe_1', async () => void expired.push('whe_1'));
      await waitFor(async () => expired.length > 0, 1_000, 'the expiry');
      expect(expired).to.deep.equal(['whe_1']);
    });

    it('is not, once its stream has connected here', async function () {
      const expired: string[] = [];
      hub.expectStream('whe_1', async () => void expired.push('whe_1'));
      collect(streamOf(hub.connect('whe_1', session())));
      await new Promise((r) => setTimeout(r, 80));
      expect(expired).to.deep.equal([]);
    });

    it('is deleted when the hub closes before its stream came', async function () {
      const slow = new ListenHub(silentLogger(), { connectWithinMs: 60_000 });
      const expired: string[] = [];
      slow.expectStream('whe_1', async () => void expired.push('whe_1'));
      await slow.close();
      expect(expired).to.deep.equal(['whe_1']);
    });
  });
});

describe('posthorn listen: the relay between the threads of serve (listen-relay.ts)', function () {
  it("carries the hub's outcome back to the dispatcher, and answers not_connected once the API thread is gone", async function () {
    const asked: ListenAsk[] = [];
    const relay = new ListenRelay((m) => asked.push(m));
    const behind = relay.sink('whe_1', frame({}));
    relay.answered(answerListen(asked[0], () => 'behind'));
    expect(await behind).to.equal('behind');
    const pending = relay.sink('whe_1', frame({}));
    relay.close();
    expect(await pending).to.equal('not_connected');
  });
});

describe('posthorn listen: the CLI side (api-client.ts, commands/listen.ts)', function () {
  const http =
    (publicUrl: string | null, host = '127.0.0.1', port = 8025) =>
    () => ({ http: { host, port, publicUrl } });

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
    expect(apiUrlFrom('http://10.0.0.1:9000/', { POSTHORN_API_URL: 'http://b' }, unused)).to.equal(
      'http://10.0.0.1:9000',
    );
    expect(apiUrlFrom(undefined, { POSTHORN_API_URL: 'https://mail.example.com/posthorn/' }, unused)).to.equal(
      'https://mail.example.com/posthorn',
    );
    expect(apiUrlFrom(undefined, {}, http('https://mail.example.com', '127.0.0.1', 9100))).to.equal(
      'http://127.0.0.1:9100',
    );
    expect(apiUrlFrom(undefined, {}, http(null, '10.1.2.3', 9000))).to.equal('http://10.1.2.3:9000');
    expect(apiUrlFrom(undefined, {}, http(null, '0.0.0.0'))).to.equal('http://127.0.0.1:8025');
    expect(apiUrlFrom(undefined, {}, http(null, '::'))).to.equal('http://127.0.0.1:8025');
    expect(apiUrlFrom(undefined, {}, http(null, '::1'))).to.equal('http://[::1]:8025');
    expect(() => apiUrlFrom('localhost:8025', {}, unused)).to.throw(CliError, /--api-url/);
  });

  it('--forward-to: https anywhere, plain http only to loopback (localhost, 127.0.0.0/8, [::1])', function () {
    for (const ok of [
      'http://localhost:3000/webhooks',
      'http://127.0.0.1:3000/h',
      'http://127.9.8.7/h',
      'http://127.1/h',
      'http://[::1]:3000/h',
      'http://LOCALHOST/h',
      'https://hooks.example.com/h',
      'https://10.0.0.5/h',
    ]) {
      expect(() => forwardUrl(ok), ok).to.not.throw();
    }
    for (const refused of [
      'http://hooks.example.com/h',
      'http://10.0.0.5:3000/h',
      'http://192.168.1.2/h',
      'http://localhost.example.com/h',
      'http://128.0.0.1/h',
      'http://[::2]/h',
      'http://0.0.0.0/h',
    ]) {
      expect(() => forwardUrl(refused), refused).to.throw(
        CliError,
        /^--forward-to: plain http goes only to this machine .* needs https$/,
      );
    }
    const e = (() => {
      try {
        forwardUrl('http://hooks.example.com/h');
      } catch (err) {
        return err as CliError;
      }
      return null;
    })();
    expect(e!.code).to.equal('usage_error');
    expect(e!.message).to.include('hooks.example.com');
    expect(() => forwardUrl('ftp://localhost/h')).to.throw(CliError, /--forward-to: an http or https URL/);
    expect(() => forwardUrl('localhost:3000')).to.throw(CliError, /--forward-to/);
  });

  it('tells why the appliance ended the stream, with a code of its own', function () {
    const told = (reason: ListenEnd | null) => {
      const e = streamEnded(reason, 'whe_1');
      return [e.code, e.message];
    };
    expect(told('endpoint_deleted')).to.deep.equal([
      'endpoint_deleted',
      'the endpoint was deleted (by DELETE /v1/webhooks/whe_1 or the dashboard); posthorn listen stopped',
    ]);
    expect(told('key_revoked')[0]).to.equal('unauthorized');
    expect(told('project_suspended')[0]).to.equal('account_suspended');
    expect(told('server_stopping')[0]).to.equal('api_unreachable');
    expect(told(null)[1]).to.include('was posthorn serve stopped?');
  });

  it("turns the API's error body into a CliError with its code and message", function () {
    const e = errorFromAnswer(404, {
      error: { code: 'not_found', message: 'webhook endpoint whe_1 not found' },
      request_id: 'req_1',
    });
    expect([e.code, e.message]).to.deep.equal(['not_found', 'webhook endpoint whe_1 not found']);
    expect(errorFromAnswer(502, undefined).message).to.include('502');
  });

  it("prints one line per event: time, type, email, recipient and the local app's answer", function () {
    const f = frame({
      id: 'evt_1',
      type: 'email.delivered',
      created_at: '2026-11-29T11:23:15.234Z',
      data: { email_id: 'msg_1', recipient: 'delivered@simulator.posthorn.test' },
    });
    expect(eventLine(f, null)).to.match(
      /^2026-11-29T11:23:15\.234Z {2}email\.delivered +msg_1 {2}delivered@simulator\.posthorn\.test$/,
    );
    expect(eventLine(f, { status: 204, error: null, durationMs: 3 })).to.match(/ → 204 \(3 ms\)$/);
    expect(eventLine(f, { status: null, error: 'ECONNREFUSED', durationMs: 1 })).to.match(/ → error: ECONNREFUSED$/);
    expect(eventLine(frame({ type: 'domain.blocklisted', created_at: 'x', data: {} }), null)).to.match(
      /domain\.blocklisted +- {2}-$/,
    );
  });

  it('with --json: the payload, its headers, and the forward when there was one', function () {
    const f = frame({ id: 'evt_1', type: 'email.sent' });
    expect(jsonLine(f, null, null)).to.deep.equal({ headers: f.headers, payload: { id: 'evt_1', type: 'email.sent' } });
    expect(
      jsonLine(f, 'http://localhost:3000/hook', { status: 500, error: null, durationMs: 4 }).forward,
    ).to.deep.equal({ url: 'http://localhost:3000/hook', status: 500, error: null, duration_ms: 4 });
  });
});
