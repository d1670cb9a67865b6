import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../base.js';
import { presentTemplate, presentVersion } from '../../../modules/sending/templates/templates.presenter.js';
import { templateService } from '../../../modules/sending/templates/templates.service.js';

export default class TemplateShow extends BaseCommand {
  static override description = 'Show a template and its versions, or one version with --version';
  static override examples = [
    '<%= config.bin %> template show welcome --project prj_01j…',
    '<%= config.bin %> template show welcome --project prj_01j… --version 2 --json',
  ];
  static override args = { id: Args.string({ description: 'template id', required: true }) };
  static override flags = {
    project: Flags.string({ description: 'project id', required: true }),
    version: Flags.integer({ description: 'one version (default: the template with every version)', min: 1 }),
  };

  protected async execute() {
    const { args, flags } = await this.parse(TemplateShow);
    return this.withStore(flags.config, async (deps) => {
      const templates = templateService(deps);
      if (flags.version !== undefined)
        return presentVersion(await templates.version(flags.project, args.id, flags.version));
      const { template, versions } = await templates.get(flags.project, args.id);
      return presentTemplate(template, versions);
    });
  }

  protected override async render(result: unknown): Promise<void> {
    const r = result as ReturnType<typeof presentVersion> | ReturnType<typeof presentTemplate>;
    if (!('versions' in r)) {
      const { html, text, ...rest } = r;
      process.stdout.write(
        this.renderObject(rest) +
          `\nhtml:\n${html ?? '(none)'}\n\ntext:\n${text ?? '(generated from the html or design)'}\n`,
      );
      return;
    }
    const { versions, ...rest } = r;
    process.stdout.write(
      this.renderObject(rest) +
        '\nVersions:\n' +
        this.renderTable(versions, ['version', 'subject', 'restored_from', 'created_at']),
    );
  }
}
