import { BaseCommand } from '../base.js';

export default class Migrate extends BaseCommand {
  static override description = 'Apply the database migrations that have not run yet';
  static override examples = ['<%= config.bin %> migrate --config /etc/posthorn/posthorn.yaml'];

  protected async execute() {
    const { flags } = await this.parse(Migrate);
    const config = this.loadConfig(flags.config);
    const store = this.openStore(config);
    try {
      const applied = await store.migrateLatest();
      return { applied, pending: await store.pendingMigrations() };
    } finally {
      await store.close();
    }
  }
}
