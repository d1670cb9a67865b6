import { apiError, notFound, validationError } from '../../../lib/errors.js';
import { isUniqueViolation, lockRows } from '../../../store/db.js';
import { checkValue, MAX_PROPERTIES, RESERVED_KEYS, type ContactProperty } from './contact-properties.js';
import * as repo from './contacts.repo.js';
import type { CreatePropertyBody } from './contacts.schema.js';
import type { Clock } from '../../../lib/time.js';
import type { Store } from '../../../store/store.js';

// The declarations of contact properties (docs/contacts.md), which contactService offers beside
// the contacts that hold their values.

interface Deps {
  store: Store;
  clock: Clock;
}

/** POST /v1/contact-properties: at most 50 per project; the fallback must be of the type. */
export async function createProperty(
  deps: Deps,
  projectId: string,
  body: CreatePropertyBody,
): Promise<ContactProperty> {
  if (RESERVED_KEYS.has(body.key))
    throw validationError('key', `${body.key} is a contact field or a reserved name; choose another key`);
  let fallback = null;
  if (body.fallback !== undefined && body.fallback !== null) {
    const checked = checkValue(body.type, body.fallback);
    if (!checked.ok) throw validationError('fallback', checked.reason);
    fallback = checked.value;
  }
  const p: ContactProperty = { projectId, key: body.key, type: body.type, fallback, createdAt: deps.clock.now() };
  try {
    await deps.store.tx(async (trx) => {
      await lockRows(trx, 'projects', [projectId]);
      if ((await repo.listProperties(trx, projectId)).length >= MAX_PROPERTIES)
        throw apiError('plan_limit_reached', `a project may declare at most ${MAX_PROPERTIES} contact properties`);
      await repo.insertProperty(trx, p);
    });
  } catch (e) {
    if (isUniqueViolation(e)) throw apiError('conflict', `the contact property ${body.key} exists`);
    throw e;
  }
  return p;
}

/** DELETE /v1/contact-properties/{key}: refused (409) while a segment reads it. */
export function deleteProperty(deps: Deps, projectId: string, key: string): Promise<void> {
  return deps.store.tx(async (trx) => {
    // the same lock a segment's creation takes: none can start reading the property meanwhile
    await lockRows(trx, 'projects', [projectId]);
    const user = await repo.segmentReading(trx, projectId, { property: key });
    if (user)
      throw apiError(
        'conflict',
        `segment ${user.id} (${user.name}) reads the property ${key}; delete or change it first`,
      );
    if (!(await repo.deleteProperty(trx, projectId, key))) throw notFound(`contact property ${key}`);
  });
}
