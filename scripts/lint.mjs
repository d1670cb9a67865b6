// npm run lint: Prettier's check and ESLint's type-aware rules side by side. Each runs on one
// core (19 s and 41 s on a slow 2-core machine, 60 s one after the other); the lint fails when
// either does, with both reports printed.
import { spawn } from 'node:child_process';

const run = (cmd, args) =>
  new Promise((resolve) => {
    const child = spawn(cmd, args, { stdio: 'inherit', shell: process.platform === 'win32' });
    child.on('exit', (code) => resolve(code ?? 1));
  });

const codes = await Promise.all([
  run('npx', ['prettier', '--check', '.']),
  run('npx', ['eslint', '--max-warnings', '0', '.']),
]);
process.exit(codes.some((c) => c !== 0) ? 1 : 0);
