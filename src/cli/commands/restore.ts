import { Args } from '@oclif/core';
import { BaseCommand } from '../base.js';
import { refuseOnPostgres } from '../postgres.js';
import { restoreSqlite } from '../../store/restore.js';

export default class Restore extends BaseCommand {
  static override description = [
    'Put a backup made by posthorn backup in place of the SQLite database, with posthorn serve stopped',
    '',
    "Refused while a posthorn serve holds data_dir. The file must pass SQLite's integrity check and hold Posthorn's",
    'migrations table; the replaced database is kept beside it as posthorn.sqlite.before-restore-<time>.',
    'Migrations newer than the backup run at the next serve or migrate. On PostgreSQL it names the pg_restore command.',
    'With --json: {"restored_from", "database", "replaced_kept_as", "migrations", "pending"}.',
  ].join('\n');
  static override examples = [
    '<%= config.bin %> restore /var/backups/posthorn-2026-01-31.sqlite --config /etc/posthorn/posthorn.yaml',
  ];
  static override args = { file: Args.string({ description: 'a backup written by posthorn backup', required: true }) };

  protected async execute() {
    const { args, flags } = await this.parse(Restore);
    const config = this.loadConfig(flags.config);
    refuseOnPostgres(config, 'restore', args.file);
    return restoreSqlite(config.dataDir, args.file, new Date());
  }
}
