// mocha's settings. Test files run in parallel, one worker per core: most of a test's time is
// spent waiting on loopback peers, spawned processes and PostgreSQL, so the suite takes about
// half as long on two cores. A test that needs a port, a file or a database takes its own
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
  jobs: availableParallelism(),
};
