// `npm test`: every test file with mocha's settings (.mocharc.cjs), the slow files first. The
// workers take files in this order, and a long file started last made the whole run wait for it
// (690 s for 1,196 s of tests on two workers, where 600 s would do). The names are the files with the
// longest summed test time (the json reporter's durations of a whole run, 2026-12-01), browser files
// among them; a file not named here runs after them.
// A file named on the command line (`npx mocha test/x.test.ts`) runs alone, under .mocharc.cjs.
const { readdirSync } = require('node:fs');
const { join } = require('node:path');
const base = require('./.mocharc.cjs');

const SLOW_FIRST = [
  'integration/durability',
  'integration/serve',
  'integration/cluster',
  'integration/cli',
  'integration/cluster-start',
  'integration/cli-json',
  'integration/domains',
  'integration/broadcasts-live',
  'integration/cli-backup',
  'browser/dashboard-a11y',
  'integration/stall-guard',
  'integration/webhooks',
  'integration/cluster-load',
  'integration/webhooks-dispatcher',
  'integration/shaping',
  'browser/dashboard-broadcasts',
  'integration/listen',
  'integration/bounce-reasons',
  'browser/dashboard-audiences',
  'browser/dashboard-templates',
  'browser/dashboard-webhooks',
  'integration/cli-doctor',
  'browser/dashboard-contacts',
  'integration/broadcasts',
  'integration/storage-full',
  'integration/shaping-sources',
  'browser/dashboard-template-editor',
  'integration/cli-templates',
  'browser/dashboard-domains',
  'integration/dkim-rotation',
  'integration/cli-verify',
  'integration/emails-send',
  'browser/dashboard-emails',
  'browser/dashboard-inbound',
  'integration/data-dir-modes',
  'integration/delivery',
  'integration/logs-api',
  'integration/metrics',
  'integration/inbound',
  'integration/cli-contacts',
].map((name) => join('test', `${name}.test.ts`));

function testFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? testFiles(join(dir, e.name)) : e.name.endsWith('.test.ts') ? [join(dir, e.name)] : [],
  );
}

const all = testFiles('test').sort();
module.exports = {
  ...base,
  spec: [...SLOW_FIRST.filter((f) => all.includes(f)), ...all.filter((f) => !SLOW_FIRST.includes(f))],
};
