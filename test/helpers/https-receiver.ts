import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitFor } from './wait.js';

export interface Received {
  method: string;
  path: string;
  headers: Record<string, string>;
  /** name, value, name, value… as sent: a repeated field shows twice here (Node keeps one user-agent in `headers`) */
  rawHeaders: string[];
  rawBody: string;
  json: any;
  at: number;
  /** the address the connection came in on: 127.0.0.1 or ::1 */
  localAddress: string;
  /** the status answered, null while a slow answer is pending */
  status: number | null;
}

export type Answer = (status: number, body?: string, headers?: Record<string, string>) => void;
/** `res` for answers `answer` cannot give (streamed, no Content-Length) */
export type Behaviour = (request: Received, answer: Answer, res: ServerResponse) => void;

export interface Certificates {
  dir: string;
  caFile: string;
  caPem: string;
  key: string;
  cert: string;
}

/** A throw-away CA and a server certificate it signed (openssl CLI, as the conformance harness does). */
export function makeCertificates(): Certificates {
  const dir = mkdtempSync(join(tmpdir(), 'posthorn-ca-'));
  const run = (args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  run([
    'req',
    '-x509',
    ...ec,
    '-keyout',
    'ca.key',
    '-out',
    'ca.pem',
    '-days',
    '2',
    '-subj',
    '/CN=Posthorn Test CA',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  ]);
  run(['req', ...ec, '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=hooks.test']);
  writeFileSync(
    join(dir, 'server.ext'),
    [
      'basicConstraints=CA:FALSE',
      'keyUsage=critical,digitalSignature,keyEncipherment',
      'extendedKeyUsage=serverAuth',
      'subjectAltName=DNS:hooks.test,DNS:*.hooks.test,DNS:localhost,IP:127.0.0.1,IP:::1',
      '',
    ].join('\n'),
  );
  run([
    'x509',
    '-req',
    '-in',
    'server.csr',
    '-CA',
    'ca.pem',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-out',
    'server.pem',
    '-days',
    '2',
    '-extfile',
    'server.ext',
  ]);
  const read = (f: string) => readFileSync(join(dir, f), 'utf8');
  return { dir, caFile: join(dir, 'ca.pem'), caPem: read('ca.pem'), key: read('server.key'), cert: read('server.pem') };
}

/**
 * The customer's webhook endpoint (or attachment server) over HTTPS on
 * loopback. Behaviour by path prefix, as in the conformance harness:
 * /ok/ and /redirected/ 200; /fail-once/ 500 the first time per path and
 * Service-Event-Id, then 200; /redirect/ 302 to /redirected/; /slow/ 200
 * after `slowMs`; /delay/MS/ 200 after MS milliseconds; /status/NNN/ NNN;
 * /toggle/ 503 until enable(path). Tests add their own with setBehaviour;
 * anything else is 404.
 */
export class HttpsReceiver {
  readonly requests: Received[] = [];
  caFile = '';
  /** the throw-away CA's directory, removed at stop */
  private certDir: string | null = null;
  caPem = '';
  port = 0;
  slowMs = 12_000;
  private readonly servers: Server[] = [];
  private readonly behaviours = new Map<string, Behaviour>();
  private readonly failedOnce = new Set<string>();
  private readonly enabled = new Set<string>();
  private readonly timers = new Set<NodeJS.Timeout>();

  /** the same list as `requests` */
  get received(): Received[] {
    return this.requests;
  }

  /** `ipv6`: also listen on [::1], same port, for AAAA-only names */
  async start(opts: { ipv6?: boolean } = {}): Promise<this> {
    const certs = makeCertificates();
    this.certDir = certs.dir;
    this.caFile = certs.caFile;
    this.caPem = certs.caPem;
    const make = () => {
      const server = createServer({ key: certs.key, cert: certs.cert }, (req, res) => this.handle(req, res));
      // a client that gives up the TLS handshake (no CA) is no failure of the receiver
      server.on('clientError', (_err, socket) => socket.destroy());
      this.servers.push(server);
      return server;
    };
    this.port = await listen(make(), '127.0.0.1', 0);
    if (opts.ipv6) await listen(make(), '::1', this.port);
    return this;
  }

  url(path: string, host = 'hooks.test'): string {
    const h = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
    return `https://${h}:${this.port}${path.startsWith('/') ? path : `/${path}`}`;
  }

  /** answer requests whose path starts with `prefix` this way (before the built-in prefixes) */
  setBehaviour(prefix: string, handler: Behaviour): void {
    this.behaviours.set(prefix, handler);
  }

  /** /toggle/ paths starting with `prefix` answer 200 from now on */
  enable(prefix: string): void {
    this.enabled.add(prefix);
  }

  disable(prefix: string): void {
    this.enabled.delete(prefix);
  }

  to(prefix: string): Received[] {
    return this.requests.filter((r) => r.path.startsWith(prefix));
  }

  waitFor(pred: (r: Received) => boolean, timeoutMs = 10_000, what = 'a request at the receiver'): Promise<Received> {
    return waitFor(async () => this.requests.find(pred), timeoutMs, what);
  }

  async stop(): Promise<void> {
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    await Promise.all(
      this.servers.map((s) => {
        s.closeAllConnections();
        return new Promise<void>((resolve) => s.close(() => resolve()));
      }),
    );
    if (this.certDir) rmSync(this.certDir, { recursive: true, force: true });
    this.certDir = null;
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('error', () => undefined);
    req.on('end', () => {
      const rawBody = Buffer.concat(chunks).toString('utf8');
      let json: unknown;
      try {
        json = JSON.parse(rawBody);
      } catch {
        json = undefined;
      }
      const rec: Received = {
        method: req.method ?? 'GET',
        path: req.url ?? '/',
        headers: req.headers as Record<string, string>,
        rawHeaders: req.rawHeaders,
        rawBody,
        json,
        at: Date.now(),
        localAddress: req.socket.localAddress ?? '',
        status: null,
      };
      this.requests.push(rec);
      const answer: Answer = (status, body = String(status), headers = {}) => {
        rec.status = status;
        if (res.destroyed) return;
        res.writeHead(status, { 'content-type': 'text/plain', ...headers });
        res.end(body);
      };
      this.behave(rec, answer, res);
    });
  }

  /** run fn after ms (for behaviours that answer late); cancelled by stop() */
  later(ms: number, fn: () => void): void {
    const t = setTimeout(() => {
      this.timers.delete(t);
      fn();
    }, ms).unref();
    this.timers.add(t);
  }

  private behave(rec: Received, answer: Answer, res: ServerResponse): void {
    const custom = [...this.behaviours]
      .filter(([prefix]) => rec.path.startsWith(prefix))
      .sort((a, b) => b[0].length - a[0].length)[0];
    if (custom) return custom[1](rec, answer, res);
    const [, kind, arg] = rec.path.split('/');
    switch (kind) {
      case 'ok':
      case 'redirected':
        return answer(200);
      case 'fail-once': {
        const key = `${rec.path}|${rec.headers['service-event-id'] ?? rec.rawBody}`;
        if (this.failedOnce.has(key)) return answer(200);
        this.failedOnce.add(key);
        return answer(500);
      }
      case 'redirect':
        return answer(302, '', { location: rec.path.replace('/redirect/', '/redirected/') });
      case 'slow':
        return this.later(this.slowMs, () => answer(200));
      case 'delay':
        return this.later(Number(arg) || 0, () => answer(200));
      case 'status':
        return answer(Number(arg) || 500);
      case 'toggle':
        return answer([...this.enabled].some((p) => rec.path.startsWith(p)) ? 200 : 503);
      default:
        return answer(404);
    }
  }
}

function listen(server: Server, host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve((server.address() as AddressInfo).port));
  });
}

export const startReceiver = (opts: { ipv6?: boolean } = {}) => new HttpsReceiver().start(opts);
