// `npm test`: every test file with mocha's settings (.mocharc.cjs), the slow files first. The
// workers take files in this order, and a long file started last made the whole run wait for it
// (690 s for 1,196 s of tests on two workers, where 600 s would do). The names are the files with the
// longest summed test time (the json reporter's durations); a file not named here runs after them.
// A file named on the command line (`npx mocha test/x.test.ts`) runs alone, under .mocharc.cjs.
const { readdirSync } = require('node:fs');
const { join } = require('node:path');
const base = require('./.mocharc.cjs');

const SLOW_FIRST = [
  'cli',
  'webhooks',
  'durability',
  'stall-guard',
  'cluster-start',
  'cli-json',
  'cluster',
  'domains',
  'broadcasts-live',
  'cli-backup',
  'serve',
  'cluster-load',
  'webhooks-dispatcher',
  'listen',
  'storage-full',
  'delivery',
  'broadcasts',
  'dkim-rotation',
  'cli-doctor',
  'emails-send',
  'cli-verify',
  'shaping-sources',
  'shaping',
].map((name) => join('test', 'integration', `${name}.test.ts`));

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
