import { BaseCommand } from '../../base.js';
import { queueStats } from '../../../modules/sending/emails/queue.service.js';

export default class QueueStats extends BaseCommand {
  static override description = 'Count queue rows by state and emails by status';
  static override examples = ['<%= config.bin %> queue stats --json'];

  protected async execute() {
    const { flags } = await this.parse(QueueStats);
    return this.withStore(flags.config, async (deps) => queueStats(deps.store));
  }
}
