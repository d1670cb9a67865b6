import { Args } from '@oclif/core';
import { BaseCommand } from '../../base.js';
import { showQueuedEmail } from '../../../modules/sending/emails/queue.service.js';
import { presentQueuedEmail } from '../../../modules/sending/emails/queue.presenter.js';

export default class QueueShow extends BaseCommand {
  static override description = 'Show an email with its recipients, queue rows and events';
  static override examples = ['<%= config.bin %> queue show msg_01j…'];
  static override args = { id: Args.string({ description: 'email id (msg_…)', required: true }) };

  protected async execute() {
    const { args, flags } = await this.parse(QueueShow);
    return this.withStore(flags.config, async ({ store }) => presentQueuedEmail(await showQueuedEmail(store, args.id)));
  }
}
