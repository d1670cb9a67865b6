#!/usr/bin/env node
import { fileURLToPath } from 'node:url';
import { Config, flush, handle, run } from '@oclif/core';
import { normalizeArgv } from '@oclif/core/help';

const argv = process.argv.slice(2);
const json = argv.includes('--json');
const config = await Config.load(fileURLToPath(import.meta.url));

/** CONTRACT §5: with --json every failure is one JSON document on stderr, oclif's own ones too. */
function jsonError(code, message, exitCode) {
  process.stderr.write(JSON.stringify({ error: { code, message } }) + '\n');
  process.exitCode = exitCode;
}

// The commands report their own failures (BaseCommand.catch); what reaches
// this file is oclif's: a command that does not exist, above all.
const [id] = normalizeArgv(config, [...argv]);
const asksForHelp = argv.includes('--help') || argv.includes('--version');
if (json && !asksForHelp && id !== undefined && !config.findCommand(id) && !config.findTopic(id)) {
  const message = id.startsWith('-')
    ? 'no command given: posthorn --help lists them'
    : `command ${id.replaceAll(':', ' ')} not found: posthorn --help lists the commands`;
  jsonError('not_found', message, 2);
} else {
  await run(argv, config).then(
    () => flush(),
    (e) =>
      json && e?.oclif?.exit !== 0 ? jsonError('error', String(e?.message ?? e), e?.oclif?.exit || 1) : handle(e),
  );
}
