import { Flags } from '@oclif/core';
import { Agent } from 'undici';
import { BaseCommand, CliError } from '../base.js';
import { ApiClient, apiKeyFrom, apiUrlFrom, describeFailure } from '../api-client.js';
import { forward, forwardUrl } from '../listen-forward.js';
import { eventLine, jsonLine, writeLine } from '../listen-output.js';
import {
  EventStreamReader,
  HEARTBEAT_MS,
  type ListenEnd,
  type ListenFrame,
} from '../../modules/notifying/webhooks/listen-stream.js';

/** What POST /v1/webhooks/listen answers (the endpoint and its secret). */
interface ListenEndpoint {
  id: string;
  events: string[];
  secret: string;
}

/** Three missed heartbeats: the connection is dead, though no error said so. */
const IDLE_MS = 3 * HEARTBEAT_MS;
const DELETE_TIMEOUT_MS = 5_000;

export default class Listen extends BaseCommand {
  static override description =
    "Receive your project's webhooks on this machine, like `stripe listen`: each event printed, and forwarded signed to a local URL. A temporary endpoint on a running posthorn serve, deleted when this stops";
  static override examples = [
    'POSTHORN_KEY=ph_test_… <%= config.bin %> listen --forward-to http://localhost:3000/webhooks',
    '<%= config.bin %> listen --key ph_test_… --events email.delivered,email.bounced --api-url http://127.0.0.1:8025',
    '<%= config.bin %> listen --json',
  ];
  static override flags = {
    'forward-to': Flags.string({
      description:
        'POST each event to this URL, with the body and signed headers of a real delivery (https, or plain http to localhost, 127.0.0.0/8 or [::1]: this machine makes the request)',
      helpValue: 'URL',
    }),
    events: Flags.string({
      description: 'comma-separated event types (default: those an endpoint created without events gets)',
      helpValue: 'a,b,…',
    }),
    key: Flags.string({ description: `API key with the webhooks:manage scope (else POSTHORN_KEY)`, helpValue: 'KEY' }),
    json: Flags.boolean({
      description:
        "one JSON document per line: the endpoint and its secret first, then each event (headers, payload, the forward's answer)",
    }),
    'api-url': Flags.string({
      description:
        "the API of the running posthorn serve (else POSTHORN_API_URL, else the config's http.host:http.port)",
      helpValue: 'URL',
    }),
  };

  protected async execute() {
    const { flags } = await this.parse(Listen);
    const key = apiKeyFrom(flags.key, process.env);
    const forwardTo = flags['forward-to'] === undefined ? null : forwardUrl(flags['forward-to']);
    const api = new ApiClient({
      key,
      url: apiUrlFrom(flags['api-url'], process.env, () => this.loadConfig(flags.config)),
    });
    const events = flags.events
      ?.split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    try {
      const endpoint = await api.json<ListenEndpoint>('POST', '/v1/webhooks/listen', events?.length ? { events } : {});
      await this.listen(api, endpoint, forwardTo);
    } finally {
      await api.close();
    }
    return undefined;
  }

  /** Until Ctrl-C or SIGTERM (the endpoint deleted, exit 0) or the stream's end (an error that says why). */
  private async listen(api: ApiClient, endpoint: ListenEndpoint, forwardTo: string | null): Promise<void> {
    const stop = new AbortController();
    let deleted: Promise<void> | null = null;
    // The appliance deletes the endpoint when the stream closes; deleted here first, so that it is gone when we exit.
    const remove = () =>
      (deleted ??= api.json('DELETE', `/v1/webhooks/${endpoint.id}`, undefined, { timeoutMs: DELETE_TIMEOUT_MS }).then(
        () => undefined,
        () => undefined,
      ));
    const onSignal = () => {
      if (stop.signal.aborted || deleted) process.exit(130);
      void remove().finally(() => stop.abort());
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    const agent = new Agent();
    try {
      const body = await api.stream(`/v1/webhooks/${endpoint.id}/listen`, stop.signal, IDLE_MS);
      this.announce(endpoint, api.target.url, forwardTo);
      const ended = await this.relay(body, (frame) => this.handle(frame, forwardTo, agent));
      if (!deleted) throw streamEnded(ended, endpoint.id);
    } catch (e) {
      if (!stop.signal.aborted && !deleted)
        throw e instanceof CliError
          ? e
          : new CliError(
              'api_unreachable',
              `the connection to the appliance was lost (${describeFailure(e)}); run posthorn listen again once it is back`,
            );
    } finally {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      await remove();
      await agent.close();
    }
  }

  private announce(endpoint: ListenEndpoint, apiUrl: string, forwardTo: string | null): void {
    if (this.jsonWanted()) {
      writeLine(
        JSON.stringify({
          object: 'listen',
          endpoint_id: endpoint.id,
          secret: endpoint.secret,
          events: endpoint.events,
          api_url: apiUrl,
          forward_to: forwardTo,
        }),
      );
      return;
    }
    process.stdout.write(
      'Ready: the events of your project come here.\n' +
        `API:            ${apiUrl}\n` +
        `Endpoint:       ${endpoint.id} (deleted when this stops)\n` +
        `Signing secret: ${endpoint.secret}\n` +
        `Events:         ${endpoint.events.join(', ')}\n` +
        (forwardTo ? `Forwarding to:  ${forwardTo}\n` : '') +
        'Ctrl-C to stop.\n\n',
    );
  }

  /** The stream read to its end, its frames handled one at a time, in order; why the appliance ended it, when it said. */
  private async relay(
    body: AsyncIterable<Buffer>,
    handle: (frame: ListenFrame) => Promise<void>,
  ): Promise<ListenEnd | null> {
    const reader = new EventStreamReader();
    const decoder = new TextDecoder();
    for await (const chunk of body) {
      for (const frame of reader.push(decoder.decode(chunk, { stream: true }))) await handle(frame);
    }
    return reader.ended;
  }

  private async handle(frame: ListenFrame, forwardTo: string | null, agent: Agent): Promise<void> {
    const forwarded = forwardTo ? await forward(forwardTo, frame, agent) : null;
    if (this.jsonWanted()) writeLine(JSON.stringify(jsonLine(frame, forwardTo, forwarded)));
    else writeLine(eventLine(frame, forwarded));
  }
}

/** Why the stream ended, as the command tells it: the reason the appliance's last line gave, else a lost connection. */
export function streamEnded(reason: ListenEnd | null, endpointId: string): CliError {
  switch (reason) {
    case 'endpoint_deleted':
      return new CliError(
        'endpoint_deleted',
        `the endpoint was deleted (by DELETE /v1/webhooks/${endpointId} or the dashboard); posthorn listen stopped`,
      );
    case 'endpoint_changed':
      return new CliError(
        'endpoint_deleted',
        `the endpoint was given another url (PATCH /v1/webhooks/${endpointId}): it is no longer a posthorn listen endpoint; posthorn listen stopped`,
      );
    case 'key_revoked':
      return new CliError(
        'unauthorized',
        'the API key was revoked (or no longer holds webhooks:manage), and the appliance deleted the endpoint; posthorn listen stopped',
      );
    case 'project_suspended':
      return new CliError(
        'account_suspended',
        'the project was suspended, and the appliance deleted the endpoint; posthorn listen stopped',
      );
    case 'server_stopping':
      return new CliError(
        'api_unreachable',
        'posthorn serve is stopping, and deleted the endpoint; run posthorn listen again once it is back',
      );
    case null:
      return new CliError(
        'api_unreachable',
        'the appliance closed the connection (was posthorn serve stopped?); run posthorn listen again once it is back',
      );
  }
}
