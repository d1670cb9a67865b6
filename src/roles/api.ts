import { createServer, type Server } from 'node:http';
import { buildApp, type EdgeSettings } from '../api/app.js';
import { ROUTES } from '../api/routes.js';
import type { Services } from '../api/services.js';
import { dashboard } from '../dashboard/dashboard.js';
import { unsubscribePages } from '../api/unsubscribe-page.js';
import { preferencesPages } from '../api/preferences-page.js';
import { formPages } from '../api/form-pages.js';
import { listenHttp } from './listen-http.js';
import type { Role } from './role.js';

export interface ApiRole extends Role {
  readonly server: Server;
  readonly port: number;
}

/** http.host and http.port. */
export interface ApiListen {
  host: string;
  port: number;
}

const DRAIN_MS = 10_000;

/** The HTTP API: the Koa edge over the module services. */
/** `withDashboard`: dashboard.enabled, the web pages at /dashboard beside the API. */
export async function startApi(
  listen: ApiListen,
  services: Services,
  edge: EdgeSettings,
  withDashboard = false,
): Promise<ApiRole> {
  const pages = [
    unsubscribePages(services.unsubscribe),
    preferencesPages(services.preferences),
    formPages(services.forms),
    ...(withDashboard
      ? [
          dashboard(services, {
            publicUrl: edge.publicUrl,
            logger: edge.logger,
            requestsPerSecond: edge.requestsPerSecond,
            clock: edge.clock,
          }),
        ]
      : []),
  ];
  const { koa } = buildApp(services, edge, ROUTES, pages);
  const handler = koa.callback();
  // koa's handler settles its own failures (ctx.onerror): its promise never rejects
  const server = createServer((req, res) => void handler(req, res));
  // Keep-alive a little longer than common proxies' idle timeouts.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  const port = await listenHttp(server, listen);
  edge.logger.info({ host: listen.host, port }, 'API listening');
  return {
    name: 'api',
    server,
    port,
    async stop() {
      // `posthorn listen` streams never finish by themselves: ended first, their endpoints deleted while the store is open
      await services.webhooks.closeListeners();
      // Stop accepting, let in-flight requests finish, then cut what is left.
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // A keep-alive connection whose last request just finished is idle now: close those as they come.
      server.closeIdleConnections();
      const idle = setInterval(() => server.closeIdleConnections(), 50);
      const timer = setTimeout(() => server.closeAllConnections(), DRAIN_MS);
      await closed;
      clearInterval(idle);
      clearTimeout(timer);
      // the confirmation mails answered submissions handed over (docs/forms.md), while the accept still runs
      await services.forms.drain();
    },
  };
}
