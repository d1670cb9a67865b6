import { readFileSync } from 'node:fs';
import type { Config } from './config/config.js';
import { validationError } from './lib/errors.js';
import { PACKAGE_VERSION } from './config/package-root.js';
import type { DnsResolver } from './dns/resolver.js';
import type { AttachmentFetcher } from './modules/sending/emails/emails.service.js';
import {
  EgressError,
  failureWord,
  guardedRequest,
  resolverLookup,
  type EgressOptions,
  type EgressResponse,
} from './net/egress.js';

// How this process reaches URLs its users give it (webhook endpoints,
// attachments by path): through the SSRF guard of net/egress.ts, with the
// network slice of the config.

export const USER_AGENT = `Posthorn/${PACKAGE_VERSION} (+webhooks)`;

/** Every outgoing request to a user-given URL goes through this (CONTRACT §4: allow_private, ca_file, resolvers). */
export function egressOptions(config: Config, resolver: DnsResolver, timeoutMs: number): EgressOptions {
  return {
    allowPrivate: config.network.allowPrivate,
    ca: config.webhooks.caFile ? readFileSync(config.webhooks.caFile) : null,
    resolve: resolverLookup(resolver),
    timeoutMs,
    userAgent: USER_AGENT,
  };
}

/**
 * Attachments by `path` come through the SSRF guard. A failure names the
 * field and says why in one stable word (failureWord, or `status N`): the
 * answer goes to whoever sent the URL, who must learn nothing of the network
 * behind the appliance (addresses, a peer's certificate or error text).
 */
export function attachmentFetcher(egress: EgressOptions): AttachmentFetcher {
  return async (url, field, maxBytes) => {
    let res: EgressResponse;
    try {
      res = await guardedRequest(url, { method: 'GET', maxBodyBytes: maxBytes }, egress);
    } catch (e) {
      const word = failureWord(e);
      if (word) throw validationError(field, `could not be downloaded: ${word}`);
      // a URL refused for its form: the message is about the URL alone
      if (e instanceof EgressError) throw validationError(field, e.message);
      throw e;
    }
    if (res.status < 200 || res.status > 299)
      throw validationError(field, `could not be downloaded: status ${res.status}`);
    return { content: res.body, contentType: res.headers['content-type']?.split(';')[0]?.trim() || null };
  };
}
