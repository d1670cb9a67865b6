import { Flags } from '@oclif/core';
import { BaseCommand } from '../../base.js';
import { presentKey } from '../../../modules/account/keys/keys.presenter.js';
import { listKeys } from '../../../modules/account/keys/keys.service.js';

export default class KeyList extends BaseCommand {
  static override description = "List a project's API keys (never the keys themselves)";
  static override examples = ['<%= config.bin %> key list --project prj_01j…'];
  static override flags = { project: Flags.string({ description: 'project id', required: true }) };
  protected override columns = ['id', 'name', 'mode', 'prefix', 'scopes', 'created_at', 'last_used_at', 'revoked_at'];

  protected async execute() {
    const { flags } = await this.parse(KeyList);
    return this.withStore(flags.config, async (deps) => (await listKeys(deps, flags.project)).map(presentKey));
  }
}
