import { notFound, validationError } from '../../lib/errors.js';
import { parseAddress } from '../../lib/address.js';
import type { Clock } from '../../lib/time.js';
import type { Store } from '../../store/store.js';
import { findProject } from '../projects/projects.repo.js';
import type { Suppression } from './suppression.js';
import { addSuppression, listSuppressions, removeSuppression } from './suppressions.repo.js';

export interface SuppressionDeps {
  store: Store;
  clock: Clock;
}

/** Addresses are kept as the accept compares them: the bare address, lower-cased. */
function addressOf(input: string): string {
  const parsed = parseAddress(input);
  if (!parsed.ok) throw validationError('address', parsed.reason);
  return parsed.value.address.toLowerCase();
}

async function existingProject(deps: SuppressionDeps, projectId: string): Promise<void> {
  if (!(await findProject(deps.store.reader, projectId))) throw notFound(`project ${projectId}`);
}

/** An operator's manual suppression: the project sends nothing more to the address (keeps the first reason given). */
export async function suppressAddress(deps: SuppressionDeps, projectId: string, input: string): Promise<Suppression> {
  const address = addressOf(input);
  await existingProject(deps, projectId);
  const s: Suppression = { projectId, address, reason: 'manual', emailId: null, createdAt: deps.clock.now() };
  await deps.store.tx((trx) => addSuppression(trx, s));
  return s;
}

export async function listSuppressed(deps: SuppressionDeps, projectId: string): Promise<Suppression[]> {
  await existingProject(deps, projectId);
  return listSuppressions(deps.store.reader, projectId);
}

export async function unsuppressAddress(deps: SuppressionDeps, projectId: string, input: string): Promise<string> {
  const address = input.trim().toLowerCase();
  if (!(await deps.store.tx((trx) => removeSuppression(trx, projectId, address)))) throw notFound(`suppression of ${address}`);
  return address;
}
