// mocha's settings. Test files run in parallel, one worker per core and one more: most of a
// test's time is spent waiting on loopback peers, spawned processes and PostgreSQL, so the CPU is
// idle a third of the time with one worker per core (two cores: 14.0 min with two workers at 140%
// CPU, 12.3 min with three at 161%; four workers overloaded it and serve processes started late).
// A test that needs a port, a file or a database takes its own
// (port 0, a temp dir, a database named by the test), never a fixed one another could share.
const { availableParallelism } = require('node:os');

module.exports = {
  'node-option': ['import=tsx'],
  // the note that a run without POSTHORN_TEST_PG_URL left the PostgreSQL variants out, once
  require: ['test/helpers/pg-note.ts'],
  timeout: 20000,
  reporter: 'dot',
  exit: true,
  parallel: true,
  jobs: availableParallelism() + 1,
};
