export interface Reply<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface Client {
  get<T = any>(path: string): Promise<Reply<T>>;
  post<T = any>(path: string, body?: unknown, headers?: Record<string, string>): Promise<Reply<T>>;
  patch<T = any>(path: string, body?: unknown, headers?: Record<string, string>): Promise<Reply<T>>;
  delete<T = any>(path: string): Promise<Reply<T>>;
  raw(
    method: string,
    path: string,
    init?: { body?: string | Buffer; headers?: Record<string, string> },
  ): Promise<Reply>;
}

export function client(baseUrl: string, key?: string | null): Client {
  const raw = async (
    method: string,
    path: string,
    init: { body?: string | Buffer; headers?: Record<string, string> } = {},
  ): Promise<Reply> => {
    const headers: Record<string, string> = { ...(key ? { authorization: `Bearer ${key}` } : {}), ...init.headers };
    const res = await fetch(baseUrl + path, { method, headers, body: init.body });
    const text = await res.text();
    let body: unknown;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      body = undefined;
    }
    return { status: res.status, headers: res.headers, body, text };
  };
  const json =
    (method: string) =>
    (path: string, body?: unknown, headers: Record<string, string> = {}) =>
      raw(
        method,
        path,
        body === undefined
          ? { headers }
          : { body: JSON.stringify(body), headers: { 'content-type': 'application/json', ...headers } },
      );
  return { get: (p) => raw('GET', p), post: json('POST'), patch: json('PATCH'), delete: (p) => raw('DELETE', p), raw };
}
