/** A Buffer over the same memory: structured cloning (worker threads) hands Buffers over as plain Uint8Arrays. */
export function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
