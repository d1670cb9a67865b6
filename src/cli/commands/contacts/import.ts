import { readFile } from 'node:fs/promises';
import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../base.js';
import { validationError } from '../../../lib/errors.js';
import { importContacts } from '../../../modules/audience/contact-import/contact-import.service.js';
import { presentImportReport } from '../../../modules/audience/contact-import/contact-import.presenter.js';

export default class ContactsImport extends BaseCommand {
  static override description =
    'Import contacts from a CSV file whose header row names the columns (email, first_name, last_name, unsubscribed, and declared properties): each row creates or changes the contact of its address; wrong rows are reported with their line and reason, the others imported';
  static override examples = ['<%= config.bin %> contacts import customers.csv --project prj_01j… --audience aud_01j…'];
  static override flags = {
    project: Flags.string({ description: 'project id', required: true }),
    audience: Flags.string({ description: 'audience id (aud_…) every imported contact joins' }),
  };
  static override args = { file: Args.string({ description: 'the CSV file (UTF-8)', required: true }) };

  protected async execute() {
    const { args, flags } = await this.parse(ContactsImport);
    let text: string;
    try {
      text = await readFile(args.file, 'utf8');
    } catch (e) {
      throw validationError('file', `cannot read ${args.file}: ${(e as Error).message}`);
    }
    // the progress line goes to stderr, and only to a terminal: stdout stays the report
    const tty = process.stderr.isTTY && !this.jsonWanted();
    return this.withStore(flags.config, async (deps) => {
      const report = await importContacts(deps, flags.project, text, flags.audience ?? null, (done, total) => {
        if (tty) process.stderr.write(`\rimported ${done.toLocaleString('en')} of ${total.toLocaleString('en')} rows`);
      });
      if (tty) process.stderr.write('\n');
      return presentImportReport(report);
    });
  }

  protected override async render(result: unknown): Promise<void> {
    const { refused, ...rest } = result as ReturnType<typeof presentImportReport>;
    process.stdout.write(
      this.renderObject({ ...rest, refused: refused.length }) +
        (refused.length ? '\nRefused rows:\n' + this.renderTable(refused, ['line', 'reason']) : ''),
    );
  }
}
