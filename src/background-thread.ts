// The entry of the background thread (roles/background.ts), and its
// composition root: the MTA, the webhook dispatcher, the cron jobs and the
// accept group commit over a store of its own.
import { parentPort, workerData } from 'node:worker_threads';
import { pino } from 'pino';
import { createLogger, type Logger } from './log/logger.js';
import { systemClock } from './lib/time.js';
import { openStore } from './store/store.js';
import { buildCore, type Core } from './core.js';
import { servingStoreOptions } from './main.js';
import { startRoles, type RunningRoles } from './start-roles.js';
import type { BackgroundData, FromBackground, ToBackground } from './roles/background.js';
import { fromWire, outcomeOf, storeForRelay } from './roles/accept-relay.js';
import { SharedDurability } from './store/shared-durability.js';
import { ListenRelay, type ListenAnswer } from './roles/listen-relay.js';
import { isStorageRefusal } from './lib/storage-full.js';
import { startThreadMetrics, threadMetrics } from './log/metrics.js';
import { nameThisThread } from './log/thread-name.js';

nameThisThread('ph-background');

const data = workerData as BackgroundData;
const port = parentPort!;
const send = (m: FromBackground) => port.postMessage(m);

async function run(): Promise<void> {
  const { config } = data;
  startThreadMetrics('background');
  const logger = createLogger(config.log.level, pino.destination({ dest: data.logToStderr ? 2 : 1, sync: true })).child(
    { thread: 'background' },
  );
  // This thread makes most of the commits: without a checkpointer of its own, SQLite checkpointed
  // inside them (wal_autocheckpoint), and every twelfth accept batch waited 10–20 ms for it.
  const durability = data.durability ? new SharedDurability(data.durability) : undefined;
  const store = openStore(
    servingStoreOptions(config, { writeLock: data.writeLock, durability, storage: { shared: data.storage, logger } }),
  );
  // the dispatcher's listen deliveries go to the API thread's streams
  const listen = new ListenRelay(send);
  const core = buildCore(config, store, logger, systemClock, { listenSink: listen.sink });
  let running: RunningRoles;
  try {
    running = await startRoles(config, core, { mta: true, webhooks: true, jobs: true });
  } catch (e) {
    await store.close().catch(() => undefined);
    await durability?.close();
    throw e;
  }
  const pending = new Set<Promise<void>>();
  /** work whose end the stop waits for */
  const track = (p: Promise<void>) => {
    pending.add(p);
    void p.finally(() => pending.delete(p));
  };
  const stop = async () => {
    // emails being stored are answered, and request log lines written, before the store closes
    await Promise.all(pending);
    await running.stop().catch((e: unknown) => logger.error({ err: e }, 'background roles did not stop cleanly'));
    await store.close().catch((e: unknown) => logger.error({ err: e }, 'could not close the store'));
    await durability?.close();
    listen.close();
    logger.flush();
    send({ type: 'stopped' });
    port.close();
  };
  port.on('message', (m: ToBackground) =>
    m.type === 'listened' ? listen.answered(m) : handle(m, core, logger, track, stop),
  );
  send({ type: 'ready' });
}

function handle(
  m: Exclude<ToBackground, ListenAnswer>,
  core: Core,
  logger: Logger,
  track: (p: Promise<void>) => void,
  stop: () => Promise<void>,
): void {
  switch (m.type) {
    case 'wake':
      for (const role of m.roles) core.wake(role);
      return;
    case 'request-logs':
      // a full disk is logged by the store, once a minute
      track(
        core.services.logs
          .write(m.batch)
          .catch(
            (e: unknown) => void (isStorageRefusal(e) || logger.warn({ err: e }, 'could not write request log lines')),
          ),
      );
      return;
    case 'metrics': {
      const { id } = m;
      void threadMetrics().then((values) => send({ type: 'metrics', id, values }));
      return;
    }
    case 'accept': {
      const { id } = m;
      const queue = core.acceptQueue!;
      track(
        Promise.allSettled(m.requests.map((r) => storeForRelay(queue, fromWire(r)))).then((settled) =>
          send({ type: 'accepted', id, outcomes: settled.map(outcomeOf) }),
        ),
      );
      return;
    }
    case 'stop':
      void stop();
  }
}

run().catch((e: unknown) => send({ type: 'failed', message: e instanceof Error ? e.message : String(e) }));
