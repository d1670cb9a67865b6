import { Type, type Static } from '@sinclair/typebox';
import { STATUS_FILTER_PATTERN } from './request-log.js';

export const ListLogsQuery = Type.Object(
  {
    limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
    cursor: Type.Optional(
      Type.String({ pattern: '^log_[0-9a-z]{26}$', description: 'next_cursor of the previous page' }),
    ),
    status: Type.Optional(
      Type.String({ pattern: STATUS_FILTER_PATTERN, description: 'a status class (2xx, 4xx, …) or one status (404)' }),
    ),
    path: Type.Optional(
      Type.String({
        minLength: 2,
        maxLength: 500,
        pattern: '^/',
        description: 'this path or any path under it, e.g. /v1/emails',
      }),
    ),
  },
  { additionalProperties: false },
);
export type ListLogsQuery = Static<typeof ListLogsQuery>;
