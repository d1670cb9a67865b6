import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../base.js';
import { validationError } from '../../../lib/errors.js';
import type { Declared } from '../../../modules/sending/templates/language/index.js';
import { presentRendered } from '../../../modules/sending/templates/templates.presenter.js';
import { templateService } from '../../../modules/sending/templates/templates.service.js';

/**
 * `--var name=value`, read as the version declares the variable: a number,
 * true/false, JSON for an array or an object, text otherwise (and for
 * variables it does not declare).
 */
export function parseVars(pairs: string[], declared: Declared): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    if (eq < 1) throw validationError('--var', `expected name=value, got '${pair}'`);
    const name = pair.slice(0, eq);
    const raw = pair.slice(eq + 1);
    const type = declared[name]?.type ?? 'string';
    if (type === 'string') out[name] = raw;
    else if (type === 'number') {
      if (raw.trim() === '' || !Number.isFinite(Number(raw)))
        throw validationError(`--var ${name}`, `is declared as a number: '${raw}' is not one`);
      out[name] = Number(raw);
    } else if (type === 'boolean') {
      if (raw !== 'true' && raw !== 'false')
        throw validationError(`--var ${name}`, 'is declared as a boolean: true or false');
      out[name] = raw === 'true';
    } else {
      try {
        out[name] = JSON.parse(raw);
      } catch {
        throw validationError(
          `--var ${name}`,
          `is declared as ${type === 'array' ? 'an array' : 'an object'}: give it as JSON`,
        );
      }
    }
  }
  return out;
}

export default class TemplateRender extends BaseCommand {
  static override description = 'Render a template as a send would (the preview of POST /v1/templates/{id}/render)';
  static override examples = [
    '<%= config.bin %> template render welcome --project prj_01j… --var name=Ann --var total=12.5 --var \'items=[{"title":"Mug"}]\'',
    '<%= config.bin %> template render welcome --project prj_01j… --language de --json',
  ];
  static override args = { id: Args.string({ description: 'template id', required: true }) };
  static override flags = {
    project: Flags.string({ description: 'project id', required: true }),
    version: Flags.integer({ description: 'version (default: the latest)', min: 1 }),
    language: Flags.string({
      description: 'a language tag such as de or pt-BR: picks a translation, formats numbers and dates',
    }),
    var: Flags.string({ description: 'a variable, name=value (repeatable)', multiple: true, default: [] }),
  };

  protected async execute() {
    const { args, flags } = await this.parse(TemplateRender);
    return this.withStore(flags.config, async (deps) => {
      const templates = templateService(deps);
      const { template } = await templates.get(flags.project, args.id);
      const declared = (await templates.version(flags.project, args.id, flags.version ?? template.latestVersion))
        .variables;
      const { version, rendered } = await templates.render(flags.project, args.id, {
        ...(flags.version !== undefined ? { version: flags.version } : {}),
        ...(flags.language !== undefined ? { language: flags.language } : {}),
        variables: parseVars(flags.var, declared),
      });
      return presentRendered(version, rendered);
    });
  }

  protected override async render(result: unknown): Promise<void> {
    const r = result as ReturnType<typeof presentRendered>;
    process.stdout.write(
      `Subject: ${r.subject}\n\n--- text ---\n${r.text ?? '(none)'}\n\n--- html ---\n${r.html ?? '(none)'}\n`,
    );
  }
}
