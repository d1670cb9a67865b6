import type { RouteDef } from '../lib/route.js';
import { domainRoutes } from '../modules/domains/domains.routes.js';
import { emailRoutes } from '../modules/emails/emails.routes.js';
import { healthRoutes } from '../modules/health/health.routes.js';
import type { Principal } from '../modules/keys/principal.js';
import { keyRoutes } from '../modules/keys/keys.routes.js';
import { inboundRoutes } from '../modules/inbound/inbound.routes.js';
import { logRoutes } from '../modules/logs/logs.routes.js';
import { usageRoutes } from '../modules/usage/usage.routes.js';
import { blocklistRoutes } from '../modules/blocklists/blocklists.routes.js';
import { contactRoutes } from '../modules/contacts/contacts.routes.js';
import { audienceRoutes } from '../modules/audiences/audiences.routes.js';
import { segmentRoutes } from '../modules/segments/segments.routes.js';
import { topicRoutes } from '../modules/topics/topics.routes.js';
import { broadcastRoutes } from '../modules/broadcasts/broadcasts.routes.js';
import { formRoutes } from '../modules/forms/forms.routes.js';
import { suppressionRoutes } from '../modules/suppressions/suppressions.routes.js';
import { verifyRoutes } from '../modules/verify/verify.routes.js';
import { templateRoutes } from '../modules/templates/templates.routes.js';
import { trackingRoutes } from '../modules/tracking/tracking.routes.js';
import { webhookRoutes } from '../modules/webhooks/webhooks.routes.js';
import type { Services } from './services.js';

/** The /v1 routes: a key with the route's scope; the guardrail tests and the OpenAPI document read them. */
export const API_ROUTES: readonly RouteDef<Services, Principal>[] = [...emailRoutes, ...domainRoutes, ...templateRoutes, ...webhookRoutes, ...inboundRoutes, ...verifyRoutes, ...keyRoutes, ...suppressionRoutes, ...usageRoutes, ...logRoutes, ...blocklistRoutes, ...contactRoutes, ...audienceRoutes, ...segmentRoutes, ...topicRoutes, ...formRoutes, ...broadcastRoutes];

/** Routes without a key: health checks for load balancers, tracking links for mail clients. */
export const PUBLIC_ROUTES: readonly RouteDef<Services, null>[] = [...healthRoutes, ...trackingRoutes];

/** The one list of routes the app registers. */
export const ROUTES: readonly RouteDef<Services>[] = [...PUBLIC_ROUTES, ...API_ROUTES];
