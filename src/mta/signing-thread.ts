// The entry of the signing thread (signing-pool.ts): MIME building and DKIM signing, nothing else.
import { parentPort } from 'node:worker_threads';
import { asBuffer } from '../lib/bytes.js';
import { signedMessageBuilder } from './signed-message.js';
import type { SignRequest, SignResult } from './signing-pool.js';

const build = signedMessageBuilder();
const port = parentPort!;

// results of one turn go back as one message
let done: SignResult[] | null = null;
const answer = (r: SignResult) => {
  if (!done) {
    done = [];
    setImmediate(() => {
      port.postMessage(done);
      done = null;
    });
  }
  done.push(r);
};

port.on('message', (batch: SignRequest[]) => {
  for (const m of batch) {
    // attachments arrive as Uint8Arrays (structured cloning); the composer wants Buffers
    const attachments = m.input.mime.attachments.map((a) => ({ ...a, content: asBuffer(a.content) }));
    build({ ...m.input, mime: { ...m.input.mime, attachments } }).then(
      (raw) => answer({ id: m.id, raw }),
      (e: unknown) => answer({ id: m.id, error: e instanceof Error ? e.message : String(e) }),
    );
  }
});
