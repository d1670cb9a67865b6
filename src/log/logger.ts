import { pino, type Logger, type DestinationStream } from 'pino';

export type { Logger };

/**
 * JSON logs on stdout. Secrets must never reach a log line: keys, passwords,
 * webhook secrets and message bodies are not logged by the code, and these
 * paths are redacted in case an object carrying one is logged whole.
 */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'posthorn' },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: {
        paths: [
          'authorization',
          '*.authorization',
          'variables',
          '*.variables',
          'headers.authorization',
          '*.headers.authorization',
          'pass',
          '*.pass',
          'password',
          '*.password',
          'secret',
          '*.secret',
          'key',
          '*.key',
        ],
        censor: '[redacted]',
      },
    },
    destination,
  );
}

export const silentLogger = (): Logger => pino({ level: 'silent' });
