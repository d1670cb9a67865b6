import { resendBroadcastsRoutes } from './resend-broadcasts.routes.js';
import { resendContactsRoutes } from './resend-contacts.routes.js';
import { resendDomainsRoutes } from './resend-domains.routes.js';
import { resendEmailRoutes } from './resend-emails.routes.js';
import { resendKeysRoutes } from './resend-keys.routes.js';
import { resendSegmentsRoutes } from './resend-segments.routes.js';
import { resendTemplatesRoutes } from './resend-templates.routes.js';
import { resendTopicsRoutes } from './resend-topics.routes.js';
import { resendWebhooksRoutes } from './resend-webhooks.routes.js';

/**
 * The Resend-compatible surface (docs/resend.md): Resend's paths under /resend, its request and
 * answer shapes and its errors, each route calling the same services as its /v1 counterpart, with
 * the same key, scope, project, limits, logs and durability.
 */
export const RESEND_ROUTES = [
  ...resendEmailRoutes,
  ...resendDomainsRoutes,
  ...resendKeysRoutes,
  ...resendWebhooksRoutes,
  ...resendContactsRoutes,
  ...resendSegmentsRoutes,
  ...resendTopicsRoutes,
  ...resendBroadcastsRoutes,
  ...resendTemplatesRoutes,
];
