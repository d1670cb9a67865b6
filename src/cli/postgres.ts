import type { Config } from '../config/config.js';
import { CliError } from './base.js';

/** database.url without its password: the message is printed and may end up in a log. */
function shownUrl(url: string | null): string {
  if (!url) return '"$DATABASE_URL"';
  try {
    const u = new URL(url);
    if (u.password) u.password = '';
    return `'${u.toString()}'`;
  } catch {
    return '"$DATABASE_URL"';
  }
}

/**
 * backup and restore copy the SQLite file; PostgreSQL has its own tools,
 * which take a consistent dump of a live database and know its roles and
 * extensions.
 */
export function refuseOnPostgres(config: Config, what: 'backup' | 'restore', file: string): void {
  if (config.database.client !== 'pg') return;
  const url = shownUrl(config.database.url);
  const command =
    what === 'backup'
      ? `pg_dump --format=custom --file=${file} ${url}`
      : `pg_restore --clean --if-exists --no-owner --dbname=${url} ${file}   (with posthorn serve stopped)`;
  throw new CliError(
    'unsupported',
    `posthorn ${what} works on SQLite only; this appliance uses PostgreSQL (database.client: pg): use ${command}`,
  );
}
