import { expect } from 'chai';
import { ApiError } from '../../src/lib/errors.js';
import { InputRefused } from '../../src/lib/input-refused.js';
import { startThread } from '../../src/lib/thread.js';
import { WorkPool, type TaskTable } from '../../src/lib/work-pool.js';

// The pool's own threads run real workers over test/fixtures/threads/pool-tasks.ts.
type Tasks = TaskTable & {
  echo: (x: unknown) => unknown;
  spin: (ms: number) => string;
  hoard: () => never;
  invalid: (field: string) => never;
  refused: () => never;
  crash: () => never;
};

function pool(opts: { threads?: number; timeBudgetMs?: number; memoryMb?: number; maxQueue?: number } = {}) {
  const outcomes: string[] = [];
  const p = new WorkPool<Tasks>({
    threads: opts.threads ?? 1,
    timeBudgetMs: opts.timeBudgetMs ?? 5000,
    memoryMb: opts.memoryMb ?? 64,
    ...(opts.maxQueue !== undefined ? { maxQueue: opts.maxQueue } : {}),
    start: (resourceLimits) => startThread(import.meta.url, '../fixtures/threads/pool-tasks', { resourceLimits }),
    onDone: (task, outcome) => outcomes.push(`${task}:${outcome}`),
  });
  return { p, outcomes };
}

describe('WorkPool (the parsing threads)', function () {
  this.timeout(30_000);

  it('answers with the task value, cloned across the thread', async () => {
    const { p } = pool();
    try {
      expect(await p.run('echo', { a: [1, 2], b: 'x' })).to.deep.equal({ a: [1, 2], b: 'x' });
    } finally {
      await p.close();
    }
  });

  context('when a job runs past its time budget', () => {
    it('refuses it as the input’s fault, stops that thread, and the next job is answered by a new one', async () => {
      const { p, outcomes } = pool({ timeBudgetMs: 300 });
      try {
        const started = Date.now();
        const err = await p.run('spin', 60_000).catch((e: unknown) => e);
        expect(err).to.be.instanceOf(InputRefused);
        expect((err as InputRefused).limit).to.equal('time_budget');
        expect(Date.now() - started).to.be.below(10_000);
        expect(await p.run('echo', 'after')).to.equal('after');
        expect(outcomes).to.include('spin:over_budget');
      } finally {
        await p.close();
      }
    });

    it('does not count the time a thread takes to start against the job', async () => {
      // a thread loading its modules under tsx takes far longer than 200 ms; a quick job still passes
      const { p } = pool({ timeBudgetMs: 200 });
      try {
        expect(await p.run('spin', 20)).to.equal('done');
      } finally {
        await p.close();
      }
    });
  });

  it('refuses a job that needs more than the heap cap, and goes on', async () => {
    const { p } = pool({ memoryMb: 32 });
    try {
      const err = await p.run('hoard', undefined).catch((e: unknown) => e);
      expect(err).to.be.instanceOf(InputRefused);
      expect((err as InputRefused).limit).to.equal('memory');
      expect(await p.run('echo', 1)).to.equal(1);
    } finally {
      await p.close();
    }
  });

  it('brings a validation error back with its field, and a refusal with its limit', async () => {
    const { p } = pool();
    try {
      const invalid = await p.run('invalid', 'html').catch((e: unknown) => e);
      expect(invalid).to.be.instanceOf(ApiError);
      expect(invalid).to.include({ status: 400, code: 'validation_error', field: 'html', message: 'html: is wrong' });
      const refused = await p.run('refused', undefined).catch((e: unknown) => e);
      expect(refused).to.be.instanceOf(InputRefused);
      expect((refused as InputRefused).limit).to.equal('mime_limit');
    } finally {
      await p.close();
    }
  });

  it('replaces a thread that exits under a job', async () => {
    const { p } = pool();
    try {
      const err = await p.run('crash', undefined).catch((e: unknown) => e);
      expect(err).to.be.instanceOf(Error);
      expect(await p.run('echo', 'again')).to.equal('again');
    } finally {
      await p.close();
    }
  });

  it('runs jobs side by side on as many threads as it has, and one slow job does not hold the others', async () => {
    const { p } = pool({ threads: 2 });
    try {
      const slow = p.run('spin', 1500);
      // the first quick job may wait for the second thread to start; the ones after it do not wait for the slow one
      await p.run('echo', 0);
      const quick = Date.now();
      for (let i = 0; i < 5; i++) await p.run('echo', i);
      expect(Date.now() - quick).to.be.below(1000);
      expect(await slow).to.equal('done');
    } finally {
      await p.close();
    }
  });

  it('refuses new work as temporary once too much waits', async () => {
    const { p } = pool({ maxQueue: 3 });
    try {
      // the thread is still starting: all three wait
      const running = [p.run('spin', 500), p.run('spin', 10), p.run('spin', 10)];
      const err = await p.run('echo', 1).catch((e: unknown) => e);
      expect(err).to.be.instanceOf(ApiError);
      expect((err as ApiError).code).to.equal('service_unavailable');
      await Promise.all(running);
    } finally {
      await p.close();
    }
  });
});
