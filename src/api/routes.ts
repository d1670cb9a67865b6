import { domainRoutes } from '../modules/domains/domains.routes.js';
import { emailRoutes } from '../modules/emails/emails.routes.js';
import { keyRoutes } from '../modules/keys/keys.routes.js';
import { webhookRoutes } from '../modules/webhooks/webhooks.routes.js';
import type { RouteDef } from './route.js';

/** The one list of /v1 routes: the app registers these, the guardrail tests and the OpenAPI document read them. */
export const API_ROUTES: readonly RouteDef[] = [...emailRoutes, ...domainRoutes, ...webhookRoutes, ...keyRoutes];
