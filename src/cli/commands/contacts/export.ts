import { Flags } from '@oclif/core';
import { BaseCommand } from '../../base.js';
import { exportContacts } from '../../../modules/audience/contact-import/contact-import.service.js';

export default class ContactsExport extends BaseCommand {
  static override description =
    'Write the contacts of a project (or of one audience) as CSV on stdout, in the columns contacts import reads';
  static override examples = ['<%= config.bin %> contacts export --project prj_01j… > contacts.csv'];
  static override flags = {
    project: Flags.string({ description: 'project id', required: true }),
    audience: Flags.string({ description: 'only this audience (aud_…)' }),
  };

  protected async execute() {
    const { flags } = await this.parse(ContactsExport);
    return this.withStore(flags.config, async (deps) => {
      // with --json the CSV is the document's `csv` field; without, it is stdout itself
      let csv = '';
      const rows = await exportContacts(deps, flags.project, flags.audience ?? null, (chunk) =>
        this.jsonWanted() ? (csv += chunk) : process.stdout.write(chunk),
      );
      return this.jsonWanted() ? { object: 'contacts_export', rows, csv } : undefined;
    });
  }
}
