import { iso } from '../../../lib/time.js';
import type { RequestLog } from './request-log.js';

/** CONTRACT §5 `GET /v1/logs` item: no bodies, no secrets */
export function presentRequestLog(l: RequestLog) {
  return {
    id: l.id,
    object: 'request_log' as const,
    method: l.method,
    path: l.path,
    status: l.status,
    request_id: l.requestId,
    key_id: l.keyId,
    duration_ms: l.durationMs,
    created_at: iso(l.createdAt),
  };
}
