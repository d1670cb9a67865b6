import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { Args } from '@oclif/core';
import { BaseCommand } from '../../base.js';
import { validationError } from '../../../lib/errors.js';
import { importReport } from '../../../modules/receiving/dmarc/dmarc.service.js';
import { presentImportedReport } from '../../../modules/receiving/dmarc/dmarc.presenter.js';

export default class DmarcImport extends BaseCommand {
  static override description =
    'Store a DMARC aggregate report that arrived elsewhere (zip, gzip or XML) for the registered domain it is about; a report already stored (same reporter and report id) is not stored again';
  static override examples = ['<%= config.bin %> dmarc import google.com!example.com!1700000000!1700086399.zip'];
  static override args = {
    file: Args.string({ description: 'the report file (.zip, .xml.gz or .xml)', required: true }),
  };

  protected async execute() {
    const { args, flags } = await this.parse(DmarcImport);
    let bytes: Buffer;
    try {
      bytes = await readFile(args.file);
    } catch (e) {
      throw validationError('file', `cannot read ${args.file}: ${(e as Error).message}`);
    }
    return this.withStore(flags.config, async (ctx) =>
      presentImportedReport(await importReport(ctx, bytes, basename(args.file))),
    );
  }
}
