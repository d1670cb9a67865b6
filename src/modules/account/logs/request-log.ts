// An API request as GET /v1/logs shows it (no I/O).

export interface RequestLog {
  id: string;
  projectId: string;
  keyId: string;
  requestId: string;
  method: string;
  /** the path without its query string, which may carry addresses or tokens */
  path: string;
  status: number;
  durationMs: number;
  createdAt: number;
}

/** `2xx` … `5xx`, or one status */
export const STATUS_FILTER_PATTERN = '^[1-5]([0-9]{2}|xx)$';

/** The status range a filter names: `4xx` → [400, 499], `404` → [404, 404]. */
export function statusRange(filter: string): [number, number] {
  if (filter.endsWith('xx')) {
    const hundred = Number(filter[0]) * 100;
    return [hundred, hundred + 99];
  }
  return [Number(filter), Number(filter)];
}

export const MAX_LOGGED_PATH = 500;
