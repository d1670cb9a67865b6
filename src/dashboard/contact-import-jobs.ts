import { randomUUID } from 'node:crypto';
import { notFound } from '../lib/errors.js';
import type { ImportReport, PreparedImport } from '../modules/audience/contact-import/contact-import.service.js';
import type { Session } from '../modules/account/sessions/sessions.service.js';
import type { ImportState } from './pages/contact-import.js';

/** Imports this dashboard remembers (running, or over); the oldest that are over are forgotten past it. */
const KEPT = 50;

/** Runs the second half of an import (the batches), calling back after each. */
export type RunImport = (
  prepared: PreparedImport,
  progress: (done: number, total: number, report: Readonly<ImportReport>) => void,
) => Promise<ImportReport>;

/**
 * The imports this process runs and has run, by id, each readable by its project only. Kept in memory:
 * an import's progress page answers on the node that runs it, and a restart forgets it (the contacts it
 * stored stay, and importing the file again changes nothing more).
 */
export function importJobs(run: RunImport) {
  const jobs = new Map<string, { projectId: string; state: ImportState }>();
  return {
    /** The import's state; another project's, or one forgotten, is not found. */
    of(session: Session, id: string): ImportState {
      const job = jobs.get(id);
      if (!job || job.projectId !== session.principal.project.id) throw notFound(`import ${id}`);
      return job.state;
    },
    /** The project's imports, the newest first. */
    recent: (session: Session): ImportState[] =>
      [...jobs.values()]
        .filter((j) => j.projectId === session.principal.project.id)
        .map((j) => j.state)
        .reverse(),
    /** Starts storing a prepared import; its state changes as the batches are stored. */
    start(session: Session, prepared: PreparedImport, fileName: string, audience: ImportState['audience']): string {
      const state = initialState(prepared, fileName, audience);
      forgetOld(jobs);
      jobs.set(state.id, { projectId: session.principal.project.id, state });
      const finish = (error: string | null) => Object.assign(state, { finishedAt: new Date().toISOString(), error });
      run(prepared, (done, _total, r) => {
        const { created, updated, addedToAudience } = r;
        Object.assign(state, { stored: done, created, updated, addedToAudience });
      }).then(
        () => finish(null),
        (e: unknown) => finish(e instanceof Error ? e.message : String(e)),
      );
      return state.id;
    },
  };
}

function initialState(prepared: PreparedImport, fileName: string, audience: ImportState['audience']): ImportState {
  return {
    id: randomUUID(),
    fileName,
    audience,
    startedAt: new Date().toISOString(),
    finishedAt: null,
    stored: 0,
    toStore: prepared.good.length,
    rows: prepared.report.rows,
    created: 0,
    updated: 0,
    addedToAudience: 0,
    refused: prepared.report.refused,
    error: null,
  };
}

/** Makes room for one more: the oldest imports that are over go first; running ones are kept. */
function forgetOld(jobs: Map<string, { state: ImportState }>): void {
  for (const [id, job] of jobs) {
    if (jobs.size < KEPT) return;
    if (job.state.finishedAt) jobs.delete(id);
  }
}
