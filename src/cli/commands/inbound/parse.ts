import { readFile } from 'node:fs/promises';
import { Args } from '@oclif/core';
import { BaseCommand } from '../../base.js';
import { presentReport } from '../../../modules/receiving/bounces/report.presenter.js';
import { readReport } from '../../../modules/receiving/bounces/report.js';
import { validationError } from '../../../lib/errors.js';

export default class InboundParse extends BaseCommand {
  static override description =
    'Read a message as the inbound listener would (bounce, complaint, auto-reply or other) and print what it says; stores nothing';
  static override examples = [
    '<%= config.bin %> inbound parse bounce.eml',
    '<%= config.bin %> inbound parse bounce.eml --json',
  ];
  static override args = {
    file: Args.string({
      description: 'the message (.eml, or an mbox holding one message); - for standard input',
      required: true,
    }),
  };

  protected async execute() {
    const { args } = await this.parse(InboundParse);
    let raw: Buffer;
    try {
      raw = args.file === '-' ? await readStdin() : await readFile(args.file);
    } catch (e) {
      throw validationError('file', `cannot read ${args.file}: ${(e as Error).message}`);
    }
    return presentReport(readReport(raw));
  }

  protected override async render(result: unknown): Promise<void> {
    const { recipients, ...rest } = result as Record<string, unknown> & { recipients: Array<Record<string, unknown>> };
    process.stdout.write(
      this.renderObject(rest) +
        (recipients.length
          ? '\nRecipients:\n' +
            this.renderTable(recipients, ['address', 'action', 'status', 'bounce_type', 'reason', 'diagnostic'])
          : ''),
    );
  }
}

async function readStdin(): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}
