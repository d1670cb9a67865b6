import { Args } from '@oclif/core';
import { BaseCommand } from '../../base.js';
import { presentEmail } from '../../../modules/sending/emails/emails.presenter.js';
import { retryAmbiguous } from '../../../modules/sending/emails/queue.service.js';

export default class QueueRetry extends BaseCommand {
  static override description =
    'Send an ambiguous email again. Only do this once you know the first copy did not arrive: it may be delivered twice.';
  static override examples = ['<%= config.bin %> queue retry msg_01j…'];
  static override args = { id: Args.string({ description: 'email id (msg_…)', required: true }) };

  protected async execute() {
    const { args, flags } = await this.parse(QueueRetry);
    return this.withStore(flags.config, async (deps) => presentEmail(await retryAmbiguous(deps, args.id)));
  }
}
