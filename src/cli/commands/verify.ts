import { readFile } from 'node:fs/promises';
import { Flags } from '@oclif/core';
import { BaseCommand } from '../base.js';
import { validationError } from '../../lib/errors.js';
import { buildVerifyService, type Verification } from '../../modules/deliverability/verify/verify.service.js';
import { presentVerification, summaryOf } from '../../modules/deliverability/verify/verify.presenter.js';

/** The API's batch size: a file is checked a hundred addresses at a time, each hundred's domains at once. */
const CHUNK = 100;

/**
 * `posthorn verify ADDRESS…` checks addresses as POST /v1/verify/batch does.
 * It is the operator's tool and costs no project anything, unless --project
 * names one: then the whole list is charged to that project's month once
 * checked, and refused whole if the month cannot cover it, as the API would.
 */
export default class Verify extends BaseCommand {
  static override description =
    'Verify email addresses as POST /v1/verify/batch does: syntax, DNS, disposable, role and free-provider lists, typo suggestions';
  static override examples = [
    '<%= config.bin %> verify jane@example.com sales@example.org',
    '<%= config.bin %> verify --file list.txt --json',
    '<%= config.bin %> verify --file list.txt --project prj_01j…',
  ];
  static override strict = false;
  static override flags = {
    file: Flags.string({
      description: 'a file of addresses, one a line (blank lines and lines starting with # are skipped)',
      helpValue: 'FILE',
    }),
    project: Flags.string({ description: "charge the addresses to this project's monthly verifications" }),
  };

  protected override columns = ['email', 'result', 'reasons', 'suggestion', 'mail_servers'];

  protected async execute() {
    const { argv, flags } = await this.parse(Verify);
    const emails = [...(argv as string[]), ...(flags.file ? await readList(flags.file) : [])];
    if (!emails.length) throw validationError('emails', 'give at least one address, or --file FILE');
    return this.withStore(flags.config, async ({ config, store, clock }) => {
      const service = buildVerifyService({ resolvers: config.dns.resolvers, ...config.verify }, store, clock);
      if (flags.project) await service.covered(flags.project, emails.length);
      const progress = flags.file && process.stderr.isTTY ? progressBar(emails.length) : null;
      const results: Verification[] = [];
      for (let i = 0; i < emails.length; i += CHUNK) {
        results.push(...(await service.check(emails.slice(i, i + CHUNK))));
        progress?.(results.length);
      }
      if (flags.project) await service.consume(flags.project, emails.length);
      // the API's rows: --json prints them as POST /v1/verify/batch's `data`
      return results.map(presentVerification);
    });
  }

  protected override async render(result: unknown): Promise<void> {
    const rows = result as Array<ReturnType<typeof presentVerification>>;
    const summary = summaryOf(rows);
    const table = rows.map((r) => ({ ...r, reasons: r.reasons.join(', '), mail_servers: r.mail_servers.join(', ') }));
    process.stdout.write(
      this.renderTable(table, this.columns) +
        `\n${Object.entries(summary)
          .map(([k, n]) => `${k} ${n}`)
          .join(', ')}\n`,
    );
  }
}

async function readList(file: string): Promise<string[]> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    throw validationError('file', `cannot read ${file}: ${(e as Error).message}`);
  }
  // spaces around a line are an export's, not the address's
  return text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'));
}

/** A bar on standard error, redrawn in place; the results go to standard output. */
function progressBar(total: number): (done: number) => void {
  const width = 30;
  return (done) => {
    const filled = Math.round((done / total) * width);
    process.stderr.write(
      `\r[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${done}/${total}${done === total ? '\n' : ''}`,
    );
  };
}
