import { Flags } from '@oclif/core';
import { BaseCommand } from '../../base.js';
import { presentNewKey } from '../../../modules/account/keys/keys.presenter.js';
import { createKey } from '../../../modules/account/keys/keys.service.js';
import { KEY_MODES } from '../../../modules/account/keys/scopes.js';

export default class KeyCreate extends BaseCommand {
  static override description = 'Create an API key; it is printed this once and only its hash is kept';
  static override examples = [
    '<%= config.bin %> key create --project prj_01j… --mode live',
    '<%= config.bin %> key create --project prj_01j… --mode test --scopes emails:send,emails:read --name ci',
    '<%= config.bin %> key create --project prj_01j… --mode live --scopes emails:send --domain-id dom_01j… --name shop',
  ];
  static override flags = {
    project: Flags.string({ description: 'project id', required: true }),
    mode: Flags.string({ description: 'test keys simulate, live keys send', required: true, options: [...KEY_MODES] }),
    scopes: Flags.string({ description: 'comma-separated scopes (default: every scope)' }),
    name: Flags.string({ description: 'a label for the key' }),
    'domain-id': Flags.string({
      description: 'restrict the key to sending From this domain of the project (dom_…); it cannot manage broadcasts',
    }),
  };

  protected async execute() {
    const { flags } = await this.parse(KeyCreate);
    const scopes = flags.scopes
      ?.split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    return this.withStore(flags.config, async (deps) => {
      const { key, secret } = await createKey(deps, {
        projectId: flags.project,
        mode: flags.mode as (typeof KEY_MODES)[number],
        scopes,
        name: flags.name,
        ...(flags['domain-id'] ? { domainId: flags['domain-id'] } : {}),
      });
      return presentNewKey(key, secret);
    });
  }
}
