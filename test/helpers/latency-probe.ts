import { connect, type Socket } from 'node:net';

// What a real user of the appliance sees while someone else attacks it: how
// long /healthz takes to answer, and how long the MX listener takes to greet
// a new connection (from another client address than the attacker's).

export interface Latencies {
  healthz: number[];
  greeting: number[];
}

export const p99 = (xs: number[]): number => {
  if (!xs.length) return Infinity;
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.99) - 1)];
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Measures both until stop() is called; an answer that never comes counts as the time until stop. */
export function probeLatency(
  baseUrl: string,
  mxPort: number,
  localAddress = '127.0.0.2',
): { stop(): Promise<Latencies> } {
  let running = true;
  const out: Latencies = { healthz: [], greeting: [] };
  const healthz = (async () => {
    while (running) {
      const t = performance.now();
      const res = await fetch(`${baseUrl}/healthz`, { signal: AbortSignal.timeout(30_000) }).catch(() => null);
      await res?.arrayBuffer();
      out.healthz.push(res?.status === 200 ? performance.now() - t : 30_000);
      await sleep(20);
    }
  })();
  const greeting = (async () => {
    while (running) {
      out.greeting.push(await greet(mxPort, localAddress));
      await sleep(50);
    }
  })();
  return {
    async stop() {
      running = false;
      await Promise.all([healthz, greeting]);
      return out;
    },
  };
}

/** Milliseconds from connect to the 220 greeting (30 s if it never came or was not a 220). */
export async function greet(port: number, localAddress: string): Promise<number> {
  const t = performance.now();
  const socket = connect({ host: '127.0.0.1', port, localAddress });
  try {
    const first = await firstLine(socket);
    const ms = performance.now() - t;
    socket.end('QUIT\r\n');
    return first.startsWith('220') ? ms : 30_000;
  } catch {
    return 30_000;
  } finally {
    socket.destroy();
  }
}

function firstLine(socket: Socket): Promise<string> {
  return new Promise((resolve, reject) => {
    let buf = '';
    const timer = setTimeout(() => reject(new Error('no greeting')), 30_000);
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => {
      buf += d;
      if (buf.includes('\n')) {
        clearTimeout(timer);
        resolve(buf.slice(0, buf.indexOf('\n')));
      }
    });
    socket.once('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
  });
}
