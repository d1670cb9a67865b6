import { Worker } from 'node:worker_threads';

// What a real user of the appliance sees while someone else attacks it: how
// long /healthz takes to answer, and how long the MX listener takes to greet
// a new connection (from another client address than the attacker's).
//
// The probes run on a thread of their own: the attack's client work in the
// test's thread (serializing and sending a 1 MB body, reading its answer)
// would otherwise delay the probes' own timers and reads, and a loaded CI
// machine counted that delay as the appliance's (a greeting 229 ms late
// while the appliance's threads were idle).

export interface Latencies {
  healthz: number[];
  greeting: number[];
}

export const p99 = (xs: number[]): number => {
  if (!xs.length) return Infinity;
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.99) - 1)];
};

// plain JavaScript run with `eval`: the worker needs no TypeScript loader
const PROBE = `
const { parentPort, workerData } = require('node:worker_threads');
const { connect } = require('node:net');
const { baseUrl, mxPort, localAddress } = workerData;
const NEVER = 30000;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
let running = true;
const out = { healthz: [], greeting: [] };

function greet() {
  return new Promise((resolve) => {
    const t = performance.now();
    const socket = connect({ host: '127.0.0.1', port: mxPort, localAddress });
    let buf = '';
    const done = (ms) => { clearTimeout(timer); socket.destroy(); resolve(ms); };
    const timer = setTimeout(() => done(NEVER), NEVER);
    socket.setEncoding('utf8');
    socket.on('data', (d) => {
      buf += d;
      if (!buf.includes('\\n')) return;
      const ms = performance.now() - t;
      socket.end('QUIT\\r\\n');
      done(buf.startsWith('220') ? ms : NEVER);
    });
    socket.once('error', () => done(NEVER));
  });
}

const healthz = (async () => {
  while (running) {
    const t = performance.now();
    const res = await fetch(baseUrl + '/healthz', { signal: AbortSignal.timeout(NEVER) }).catch(() => null);
    await res?.arrayBuffer();
    out.healthz.push(res?.status === 200 ? performance.now() - t : NEVER);
    await sleep(20);
  }
})();
const greeting = (async () => {
  while (running) {
    out.greeting.push(await greet());
    await sleep(50);
  }
})();
parentPort.once('message', async () => {
  running = false;
  await Promise.all([healthz, greeting]);
  parentPort.postMessage(out);
});
parentPort.postMessage('started');
`;

/** Measures both until stop() is called; an answer that never comes counts as 30 s. */
export async function probeLatency(
  baseUrl: string,
  mxPort: number,
  localAddress = '127.0.0.2',
): Promise<{ stop(): Promise<Latencies> }> {
  const worker = new Worker(PROBE, { eval: true, workerData: { baseUrl, mxPort, localAddress } });
  await new Promise<void>((resolve, reject) => {
    worker.once('message', () => resolve());
    worker.once('error', reject);
  });
  return {
    async stop() {
      const result = new Promise<Latencies>((resolve, reject) => {
        worker.once('message', resolve);
        worker.once('error', reject);
      });
      worker.postMessage('stop');
      try {
        return await result;
      } finally {
        await worker.terminate();
      }
    },
  };
}
