import { Args } from '@oclif/core';
import { BaseCommand } from '../../base.js';
import { presentKey } from '../../../modules/account/keys/keys.presenter.js';
import { revokeKey } from '../../../modules/account/keys/keys.service.js';

export default class KeyRevoke extends BaseCommand {
  static override description = 'Revoke an API key: its next request gets 401';
  static override examples = ['<%= config.bin %> key revoke key_01j…'];
  static override args = { id: Args.string({ description: 'key id (key_…)', required: true }) };

  protected async execute() {
    const { args, flags } = await this.parse(KeyRevoke);
    return this.withStore(flags.config, async (deps) => presentKey(await revokeKey(deps, args.id)));
  }
}
