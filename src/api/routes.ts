import type { RouteDef } from '../lib/route.js';
import { domainRoutes } from '../modules/deliverability/domains/domains.routes.js';
import { emailRoutes } from '../modules/sending/emails/emails.routes.js';
import { healthRoutes } from '../modules/operations/health/health.routes.js';
import type { Principal } from '../modules/account/keys/principal.js';
import { keyRoutes } from '../modules/account/keys/keys.routes.js';
import { inboundRoutes } from '../modules/receiving/inbound/inbound.routes.js';
import { logRoutes } from '../modules/account/logs/logs.routes.js';
import { usageRoutes } from '../modules/account/usage/usage.routes.js';
import { blocklistRoutes } from '../modules/deliverability/blocklists/blocklists.routes.js';
import { contactRoutes } from '../modules/audience/contacts/contacts.routes.js';
import { audienceRoutes } from '../modules/audience/audiences/audiences.routes.js';
import { segmentRoutes } from '../modules/audience/segments/segments.routes.js';
import { topicRoutes } from '../modules/audience/topics/topics.routes.js';
import { broadcastRoutes } from '../modules/audience/broadcasts/broadcasts.routes.js';
import { broadcastTrialRoutes } from '../modules/audience/broadcasts/broadcast-trials.routes.js';
import { formRoutes } from '../modules/audience/forms/forms.routes.js';
import { suppressionRoutes } from '../modules/sending/suppressions/suppressions.routes.js';
import { verifyRoutes } from '../modules/deliverability/verify/verify.routes.js';
import { templateRoutes } from '../modules/sending/templates/templates.routes.js';
import { trackingRoutes } from '../modules/sending/tracking/tracking.routes.js';
import { webhookRoutes } from '../modules/notifying/webhooks/webhooks.routes.js';
import type { Services } from './services.js';
import { RESEND_ROUTES } from '../modules/compat/resend/resend.routes.js';

/** The /v1 routes: a key with the route's scope; the guardrail tests and the OpenAPI document read them. */
export const API_ROUTES: readonly RouteDef<Services, Principal>[] = [
  ...emailRoutes,
  ...domainRoutes,
  ...templateRoutes,
  ...webhookRoutes,
  ...inboundRoutes,
  ...verifyRoutes,
  ...keyRoutes,
  ...suppressionRoutes,
  ...usageRoutes,
  ...logRoutes,
  ...blocklistRoutes,
  ...contactRoutes,
  ...audienceRoutes,
  ...segmentRoutes,
  ...topicRoutes,
  ...formRoutes,
  ...broadcastRoutes,
  ...broadcastTrialRoutes,
];

/** Routes without a key: health checks for load balancers, tracking links for mail clients. */
export const PUBLIC_ROUTES: readonly RouteDef<Services, null>[] = [...healthRoutes, ...trackingRoutes];

/**
 * The Resend-compatible surface (docs/resend.md): the same services and scopes as /v1, a key
 * required, under Resend's paths and shapes; not in the OpenAPI document.
 */
export const COMPAT_ROUTES: readonly RouteDef<Services, Principal>[] = RESEND_ROUTES;

/** The one list of routes the app registers. */
export const ROUTES: readonly RouteDef<Services>[] = [...PUBLIC_ROUTES, ...API_ROUTES, ...COMPAT_ROUTES];
