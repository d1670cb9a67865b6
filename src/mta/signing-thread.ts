// The entry of a signing thread (signing-pool.ts): MIME building and DKIM signing, nothing else.
import { parentPort } from 'node:worker_threads';
import { asBuffer } from '../lib/bytes.js';
import { signedMessageBuilder } from './signed-message.js';
import type { SignRequest, SignResult } from './signing-pool.js';
import { nameThisThread } from '../log/thread-name.js';

nameThisThread('ph-signing');

// The RSA operation runs here, not on libuv's pool: this thread exists to do it, and the pool
// would only add a hop each way (signing-pool.ts starts one such thread per core but one).
const build = signedMessageBuilder('here');
const port = parentPort!;

/** Results go back at least this often (ms) while a long batch is worked through, and at its end. */
const ANSWER_EVERY_MS = 2;

let queue: Promise<void> = Promise.resolve();

port.on('message', (batch: SignRequest[]) => {
  queue = queue.then(() => work(batch));
});

async function work(batch: SignRequest[]): Promise<void> {
  let done: SignResult[] = [];
  let since = performance.now();
  for (const m of batch) {
    // Attachments arrive as Uint8Arrays (structured cloning); the composer wants Buffers. Input
    // this cannot read throws out of here and ends the thread: the pool builds its messages itself.
    const attachments = m.input.mime.attachments.map((a) => ({ ...a, content: asBuffer(a.content) }));
    try {
      done.push({ id: m.id, raw: await build({ ...m.input, mime: { ...m.input.mime, attachments } }) });
    } catch (e) {
      done.push({ id: m.id, error: e instanceof Error ? e.message : String(e) });
    }
    // a message signed early is not held back for the whole batch (a claim hands over up to 100)
    if (performance.now() - since >= ANSWER_EVERY_MS) {
      port.postMessage(done);
      [done, since] = [[], performance.now()];
    }
  }
  if (done.length) port.postMessage(done);
}
