import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../base.js';
import { refuseOnPostgres } from '../postgres.js';
import { backupSqlite } from '../../store/backup.js';

export default class Backup extends BaseCommand {
  static override description = [
    'Write a consistent copy of the SQLite database to FILE, also while posthorn serve runs',
    '',
    "The copy is made with SQLite's VACUUM INTO, in one read transaction: it is the database as of one commit,",
    'written with mode 0600. An existing FILE is refused without --force.',
    'On PostgreSQL it refuses and names the pg_dump command to use.',
    'With --json: {"file", "bytes", "migrations"}.',
  ].join('\n');
  static override examples = [
    '<%= config.bin %> backup /var/backups/posthorn-$(date +%F).sqlite',
    '<%= config.bin %> backup nightly.sqlite --force --json',
  ];
  static override args = { file: Args.string({ description: 'where to write the copy', required: true }) };
  static override flags = { force: Flags.boolean({ description: 'replace FILE if it exists' }) };

  protected async execute() {
    const { args, flags } = await this.parse(Backup);
    const config = this.loadConfig(flags.config);
    refuseOnPostgres(config, 'backup', args.file);
    return backupSqlite(config.dataDir, args.file, { force: flags.force });
  }
}
