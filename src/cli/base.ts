import { Command, Flags } from '@oclif/core';
import { loadConfig } from '../config/load.js';
import { ConfigError, type Config } from '../config/config.js';
import { ApiError } from '../lib/errors.js';
import { systemClock, type Clock } from '../lib/time.js';
import { openStore, type Store } from '../store/store.js';
import { DataDirLocked } from '../store/data-dir-lock.js';
import { createResolver, type DnsResolver } from '../dns/resolver.js';
import { domainSettings } from '../modules/deliverability/domains/domain-settings.js';
import type { DomainSettings } from '../modules/deliverability/domains/domain-settings.js';
import { renderObject, renderTable } from './table.js';

/** A refusal of the CLI itself, with its code for the JSON error (CONTRACT §5). */
export class CliError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

export interface CliContext {
  config: Config;
  store: Store;
  clock: Clock;
  resolver: DnsResolver;
  domains: DomainSettings;
}

/**
 * Every command takes --config and --json (CONTRACT §3). A command returns
 * its result; this class prints it (one JSON document with --json, a table
 * otherwise) and turns any failure into stderr output and a non-zero exit.
 */
export abstract class BaseCommand extends Command {
  static override baseFlags = {
    config: Flags.string({
      description: 'config file (else POSTHORN_CONFIG, else config/default.yaml)',
      helpValue: 'FILE',
    }),
    json: Flags.boolean({ description: 'print one JSON document on stdout' }),
  };

  /** columns shown in the table form of a list */
  protected columns?: string[];

  protected abstract execute(): Promise<unknown>;

  override async run(): Promise<void> {
    const result = await this.execute();
    if (result === undefined) return;
    if (this.jsonWanted()) process.stdout.write(JSON.stringify(result, null, 2) + '\n');
    else await this.render(result);
  }

  /** The human form; commands with a richer shape override it. */
  protected async render(result: unknown): Promise<void> {
    process.stdout.write(
      Array.isArray(result)
        ? renderTable(result as Array<Record<string, unknown>>, this.columns)
        : renderObject(result as Record<string, unknown>),
    );
  }

  protected renderTable = renderTable;
  protected renderObject = renderObject;

  protected jsonWanted(): boolean {
    return this.argv.includes('--json');
  }

  /** A POSTHORN_* variable that is not an override is told on stderr, not under --json (stderr then holds only the error document). */
  protected loadConfig(path: string | undefined): Config {
    return loadConfig({ path, warn: (message) => this.jsonWanted() || process.stderr.write(`Warning: ${message}\n`) });
  }

  protected openStore(config: Config): Store {
    return openStore({ client: config.database.client, dataDir: config.dataDir, url: config.database.url });
  }

  /** Open the store (migrating it: every command works on a fresh data dir), run fn, close. */
  protected async withStore<T>(configPath: string | undefined, fn: (ctx: CliContext) => Promise<T>): Promise<T> {
    const config = this.loadConfig(configPath);
    const store = this.openStore(config);
    try {
      await store.migrateLatest();
      return await fn({
        config,
        store,
        clock: systemClock,
        resolver: createResolver({ servers: config.dns.resolvers }),
        domains: domainSettings(config),
      });
    } finally {
      await store.close();
    }
  }

  override async catch(err: Error & { exitCode?: number; oclif?: { exit?: number } }): Promise<void> {
    const code =
      err instanceof ApiError || err instanceof CliError
        ? err.code
        : err instanceof DataDirLocked
          ? 'conflict'
          : err instanceof ConfigError
            ? 'config_error'
            : err.oclif
              ? 'usage_error'
              : 'error';
    const message = err.message.replace(/\s+$/, '');
    if (this.jsonWanted()) process.stderr.write(JSON.stringify({ error: { code, message } }) + '\n');
    else process.stderr.write(`Error: ${message}\n`);
    process.exitCode = err.oclif?.exit && err.oclif.exit !== 0 ? err.oclif.exit : 1;
  }
}

/** "true" | "false" flag values of `project set` */
export const boolOption = (description: string) => Flags.string({ description, options: ['true', 'false'] });

export const parseBool = (v: string | undefined): boolean | undefined => (v === undefined ? undefined : v === 'true');
