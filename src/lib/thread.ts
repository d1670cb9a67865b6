import { Worker, type WorkerOptions } from 'node:worker_threads';

/**
 * A worker thread running the module `name` that sits beside the module
 * `from` (its import.meta.url). From dist/ that is the compiled `.js`.
 * Under tsx (the tests run the sources) it is the `.ts`, started through
 * tsx-thread.mjs: Node 20 does not carry the parent's `--import tsx` into
 * worker threads, so without it a thread's entry fails to load there (and a
 * component with a fallback, like the signing thread, would quietly never
 * be tested).
 */
export function startThread(from: string, name: string, options: WorkerOptions = {}): Worker {
  if (!from.endsWith('.ts')) return new Worker(new URL(`./${name}.js`, from), options);
  return new Worker(new URL('./tsx-thread.mjs', import.meta.url), {
    ...options,
    argv: [new URL(`./${name}.ts`, from).href],
  });
}
