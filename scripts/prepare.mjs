// npm's `prepare`: build dist/ on npm install, npm ci and npm pack. Skipped under
// `npm exec` (npx) when dist/ is there: the first `npx posthorn` in a clone links the
// checkout into npx's cache, which runs `prepare` again, a 20 s rebuild of what
// `npm install` has just built.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

if (process.env.npm_command === 'exec' && existsSync('oclif.manifest.json')) process.exit(0);
const build = spawnSync('npm', ['run', 'build'], { stdio: 'inherit' });
process.exit(build.status ?? 1);
