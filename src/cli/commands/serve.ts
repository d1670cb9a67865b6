import { BaseCommand } from '../base.js';
import { pino } from 'pino';
import { createLogger } from '../../log/logger.js';

export default class Serve extends BaseCommand {
  static override description =
    'Run the appliance: the API, the MTA, the webhook dispatcher, the DKIM zone DNS server and the jobs';
  static override examples = ['<%= config.bin %> serve --config /etc/posthorn/posthorn.yaml'];

  protected async execute() {
    const { flags } = await this.parse(Serve);
    const config = this.loadConfig(flags.config);
    // With --json, stdout carries one JSON document (the first start's key, if any) and the
    // logs go to stderr; without it, logs are JSON lines on stdout as usual for a service.
    const json = this.jsonWanted();
    const logger = createLogger(config.log.level, json ? pino.destination(2) : undefined);
    let fatal: ((reason: string) => void) | null = null;
    // Listened for before the start, which takes a while (the API listens before the rest is up): a
    // SIGTERM or SIGINT meanwhile (systemd stopping a unit that is starting, Ctrl-C) waits for the
    // start to end and then stops cleanly, rather than killing the process half started.
    let signalled: string | null = null;
    let onSignal: (signal: string) => void = (signal) => {
      signalled ??= signal;
    };
    process.once('SIGTERM', () => onSignal('SIGTERM'));
    process.once('SIGINT', () => onSignal('SIGINT'));
    // loaded here, not at the top: the other commands need none of what the server is made of
    const { startAppliance } = await import('../../main.js');
    const app = await startAppliance(config, logger, {
      logToStderr: json,
      onFatal: (reason) => fatal?.(reason),
      announceFirstStart(first) {
        // Printed, not logged: the one time this key is ever shown (CONTRACT §1).
        process.stdout.write(
          json
            ? JSON.stringify({
                first_start: { project_id: first.projectId, project_name: 'default', key: first.key },
              }) + '\n'
            : `\nPosthorn first start: created project "default" (${first.projectId}) and a test API key with every scope:\n\n` +
                `    ${first.key}\n\nIt is shown only this once.\n\n`,
        );
      },
    });
    await new Promise<void>((resolve) => {
      let stopping = false;
      const stop = (signal: string) => {
        if (stopping) return;
        stopping = true;
        logger.info({ signal }, 'stopping');
        app.stop().then(resolve, (e: unknown) => {
          logger.error({ err: e }, 'stop failed');
          process.exitCode = 1;
          resolve();
        });
      };
      onSignal = stop;
      if (signalled) stop(signalled);
      // Without its background thread the appliance accepts mail it cannot send: stop, exit non-zero,
      // and let the supervisor (systemd, Docker) start it again.
      fatal = (reason) => {
        logger.fatal({ reason }, 'stopping: a part of the appliance failed');
        process.exitCode = 1;
        stop('fatal');
      };
    });
    return undefined;
  }
}
