/**
 * Untrusted input that broke a limit of the parser reading it (too deep,
 * too many parts or headers, too long to parse, too much memory): the
 * input's fault, never ours, so it is refused for good (HTTP 400 naming the
 * field, SMTP 554 5.6.0, a DNS packet dropped) and logged once at warn
 * without a stack. `limit` is a stable word for logs and metrics.
 */
export class InputRefused extends Error {
  constructor(
    readonly limit: string,
    message: string,
  ) {
    super(message);
    this.name = 'InputRefused';
  }
}

export const isInputRefused = (e: unknown): e is InputRefused => e instanceof InputRefused;
