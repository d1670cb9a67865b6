// The entry of the signing thread (signing-pool.ts): MIME building and DKIM signing, nothing else.
import { parentPort } from 'node:worker_threads';
import { asBuffer } from '../lib/bytes.js';
import { signedMessageBuilder, type SignedMessageInput } from './signed-message.js';

const build = signedMessageBuilder();
const port = parentPort!;

port.on('message', (m: { id: number; input: SignedMessageInput }) => {
  // attachments arrive as Uint8Arrays (structured cloning); the composer wants Buffers
  const attachments = m.input.mime.attachments.map((a) => ({ ...a, content: asBuffer(a.content) }));
  build({ ...m.input, mime: { ...m.input.mime, attachments } }).then(
    (raw) => port.postMessage({ id: m.id, raw }),
    (e: unknown) => port.postMessage({ id: m.id, error: e instanceof Error ? e.message : String(e) }),
  );
});
