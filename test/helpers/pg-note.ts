// Whether this run has PostgreSQL, and the note that says so at its end. A mocha global
// fixture (.mocharc.cjs `require`): it runs once in the main process, after every worker of a
// parallel run has finished, so the note is printed once, not once per spec file.

export const PG_URL = process.env.POSTHORN_TEST_PG_URL;

/** Printed at the end of a run without POSTHORN_TEST_PG_URL, whose PostgreSQL variants were never defined. */
export const PG_LEFT_OUT = 'PostgreSQL variants not run: set POSTHORN_TEST_PG_URL';

// a run of SQLite alone must not read as the whole suite (the project leaves no skipped tests behind)
export function mochaGlobalTeardown(): void {
  if (!PG_URL) console.log(`\n  ${PG_LEFT_OUT}`);
}
