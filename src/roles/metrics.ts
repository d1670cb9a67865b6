import { createServer } from 'node:http';
import type { Logger } from '../log/logger.js';
import type { MetricsService } from '../modules/operations/health/metrics.service.js';
import { listenHttp } from './listen-http.js';
import type { Role } from './role.js';

export interface MetricsRole extends Role {
  readonly port: number;
}

/**
 * /metrics on a listener of its own (metrics.port): a scraper reaches it on
 * an internal address while the API listener faces the internet. It answers
 * GET /metrics and nothing else.
 */
export async function startMetricsListener(
  listen: { host: string; port: number },
  metrics: MetricsService,
  logger: Logger,
): Promise<MetricsRole> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found: this listener serves GET /metrics\n');
      return;
    }
    metrics.scrape().then(
      ({ contentType, text }) =>
        res.writeHead(200, { 'Content-Type': contentType }).end(req.method === 'HEAD' ? undefined : text),
      (e: unknown) => {
        logger.error({ err: e }, 'metrics scrape failed');
        res.writeHead(500, { 'Content-Type': 'text/plain' }).end('metrics unavailable\n');
      },
    );
  });
  const port = await listenHttp(server, listen);
  logger.info({ host: listen.host, port }, 'metrics listening');
  return {
    name: 'metrics',
    port,
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
