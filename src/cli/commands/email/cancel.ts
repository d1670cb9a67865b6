import { Args } from '@oclif/core';
import { BaseCommand } from '../../base.js';
import { presentEmail } from '../../../modules/sending/emails/emails.presenter.js';
import { cancelEmailById } from '../../../modules/sending/emails/emails.service.js';

export default class EmailCancel extends BaseCommand {
  static override description =
    'Cancel an email that is scheduled, or queued and not yet attempted: none of its recipients gets it (POST /v1/emails/{id}/cancel for any project).';
  static override examples = ['<%= config.bin %> email cancel msg_01j…'];
  static override args = { id: Args.string({ description: 'email id (msg_…)', required: true }) };

  protected async execute() {
    const { args, flags } = await this.parse(EmailCancel);
    return this.withStore(flags.config, async (deps) => presentEmail(await cancelEmailById(deps, null, args.id)));
  }
}
