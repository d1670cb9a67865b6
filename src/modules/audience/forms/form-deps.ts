import type { Clock } from '../../../lib/time.js';
import type { Logger } from '../../../log/logger.js';
import type { Store } from '../../../store/store.js';
import type { Acceptor } from '../../sending/emails/accept-batch.js';
import type { TemplateService } from '../../sending/templates/templates.service.js';

/** What the forms module is built from (core.ts). */
export interface FormDeps {
  store: Store;
  clock: Clock;
  logger: Logger;
  /** the installation's tracking key (tracking.service.ts trackingKey): it signs confirmation links */
  key(): Promise<Buffer>;
  /** http.public_url: the pages and confirmation links are under it */
  publicUrl: string | null;
  /** network.allow_private: http URLs of loopback hosts for redirect_url and allowed_origins (tests) */
  allowPrivate: boolean;
  /** the send path of POST /v1/emails, which confirmation mail takes */
  accept: Acceptor;
  templates: Pick<TemplateService, 'get' | 'renderForSend'>;
  /** forms.*: submissions per client IP per form per hour, per form per minute */
  limits: { perIpPerHour: number; perFormPerMinute: number };
}
