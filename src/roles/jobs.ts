import cron from 'node-cron';
import type { Logger } from '../log/logger.js';
import type { Role } from './role.js';

export interface Job {
  name: string;
  /** node-cron expression */
  schedule: string;
  run(): Promise<string | void>;
}

/**
 * The cron jobs, from the explicit list queue-roles.ts builds. A run never overlaps
 * the previous one of the same job; failures are logged, not fatal.
 * (Queue work — scheduled sends, retries, webhook attempts — is not here:
 * due rows in the database drive it.)
 */
export function startJobs(jobs: Job[], logger: Logger): Role {
  const tasks = jobs.map((job) =>
    cron.schedule(
      job.schedule,
      async () => {
        const started = Date.now();
        try {
          const summary = await job.run();
          logger.info({ job: job.name, ms: Date.now() - started, summary }, 'job done');
        } catch (e) {
          logger.error({ job: job.name, err: e }, 'job failed');
        }
      },
      { name: job.name, noOverlap: true },
    ),
  );
  return {
    name: 'jobs',
    async stop() {
      // an inline task stops at once (void), a background one asynchronously
      await Promise.all(tasks.map((t) => Promise.resolve(t.stop())));
    },
  };
}
