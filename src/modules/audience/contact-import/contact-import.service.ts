import { notFound, validationError } from '../../../lib/errors.js';
import { csvRow, parseCsv } from '../../../lib/csv.js';
import type { Clock } from '../../../lib/time.js';
import { lockRows } from '../../../store/db.js';
import type { Store } from '../../../store/store.js';
import { insertEvents } from '../../notifying/events/events.repo.js';
import { findAudience, addMembers } from '../audiences/audiences.repo.js';
import { importColumns, importRow, type ImportedRow } from '../contacts/contact-import.js';
import type { ContactProperty } from '../contacts/contact-properties.js';
import {
  contactsByEmail,
  insertContact,
  listProperties,
  pageOfContacts,
  replaceContact,
  updateContact,
  type Contact,
} from '../contacts/contacts.repo.js';
import { contactEvent, merged, operatorsContact, presented } from '../contacts/contacts.service.js';

/** Rows stored per transaction: a crash midway keeps the batches done; importing the file again changes nothing more. */
const BATCH = 500;

/** What an import did: the data rows read, the contacts created and changed, and the rows refused with why. */
export interface ImportReport {
  rows: number;
  created: number;
  updated: number;
  /** the audience every imported contact joins, if one was given */
  audienceId: string | null;
  addedToAudience: number;
  refused: Array<{ line: number; reason: string }>;
}

/**
 * `posthorn contacts import FILE.csv`: each data row creates the contact of
 * its address or changes it (an upsert), in batches of 500 per transaction
 * with their contact.created / contact.updated; with an audience, each
 * imported contact joins it. A row that is wrong is refused with its line
 * and the reason, and the others go on; a header that names an unknown
 * column refuses the whole file before anything is stored.
 */
export async function importContacts(
  deps: { store: Store; clock: Clock },
  projectId: string,
  text: string,
  audienceId: string | null,
  progress: ImportProgress = () => {},
): Promise<ImportReport> {
  return runImport(deps, await prepareImport(deps, projectId, text, audienceId), progress);
}

/** Called after each batch stored: the good rows stored so far of all of them, and the report so far. */
export type ImportProgress = (done: number, total: number, report: Readonly<ImportReport>) => void;

/** A file read and checked, its rows sorted into the good and the refused, before anything is stored. */
export interface PreparedImport {
  projectId: string;
  properties: Map<string, ContactProperty>;
  good: Array<{ line: number; row: ImportedRow }>;
  report: ImportReport;
}

/**
 * The first half of an import, which refuses a file that cannot be imported at all (not CSV, no header,
 * an unknown column, an audience not the project's) before anything is stored: the dashboard answers
 * those beside its file field, and runs the second half while its progress page refreshes.
 */
export async function prepareImport(
  deps: { store: Store },
  projectId: string,
  text: string,
  audienceId: string | null,
): Promise<PreparedImport> {
  let table;
  try {
    table = parseCsv(text);
  } catch (e) {
    throw validationError('file', (e as Error).message);
  }
  const [header, ...data] = table;
  if (!header)
    throw validationError(
      'file',
      'the file is empty: a header row (email, first_name, last_name, unsubscribed, properties…) is needed',
    );
  if (audienceId && !(await findAudience(deps.store.knex, projectId, audienceId)))
    throw notFound(`audience ${audienceId}`);
  const properties = new Map((await listProperties(deps.store.knex, projectId)).map((p) => [p.key, p]));
  const columns = importColumns(header.fields, properties);
  if (!columns.ok) throw validationError('file', columns.message);
  const report: ImportReport = {
    rows: data.length,
    created: 0,
    updated: 0,
    audienceId,
    addedToAudience: 0,
    refused: [],
  };
  const seen = new Map<string, number>();
  const good: Array<{ line: number; row: ImportedRow }> = [];
  for (const { line, fields } of data) {
    const r = importRow(fields, columns.columns);
    if (!r.ok) report.refused.push({ line, reason: r.reason });
    else if (seen.has(r.row.email))
      report.refused.push({ line, reason: `${r.row.email} is on line ${seen.get(r.row.email)} already` });
    else {
      seen.set(r.row.email, line);
      good.push({ line, row: r.row });
    }
  }
  return { projectId, properties, good, report };
}

/** The second half: the good rows stored in batches, the report counted as they are. */
export async function runImport(
  deps: { store: Store; clock: Clock },
  prepared: PreparedImport,
  progress: ImportProgress = () => {},
): Promise<ImportReport> {
  const { projectId, good, properties, report } = prepared;
  for (let i = 0; i < good.length; i += BATCH) {
    const done = await storeBatch(deps, projectId, good.slice(i, i + BATCH), properties, report.audienceId);
    report.created += done.created;
    report.updated += done.updated;
    report.addedToAudience += done.added;
    progress(Math.min(i + BATCH, good.length), good.length, report);
  }
  return report;
}

async function storeBatch(
  deps: { store: Store; clock: Clock },
  projectId: string,
  batch: Array<{ line: number; row: ImportedRow }>,
  properties: Map<string, ContactProperty>,
  audienceId: string | null,
): Promise<{ created: number; updated: number; added: number }> {
  // counted from what the transaction returns: a transaction run again (PostgreSQL's retry) counts once
  return deps.store.tx(async (trx) => {
    await lockRows(trx, 'projects', [projectId]);
    const now = deps.clock.now();
    const existing = new Map(
      (
        await contactsByEmail(
          trx,
          projectId,
          batch.map((b) => b.row.email),
        )
      ).map((c) => [c.email, c]),
    );
    const made: Contact[] = [];
    const changed: Contact[] = [];
    for (const { row } of batch) {
      const found = existing.get(row.email) ?? null;
      // a pending contact (a signup nobody confirmed) is taken over as new, as POST /v1/contacts does
      const before = operatorsContact(found);
      const c = { ...merged(projectId, before, row, properties, now), ...(found && !before ? { id: found.id } : {}) };
      if (before) {
        await updateContact(trx, c);
        changed.push(c);
      } else {
        await (found ? replaceContact(trx, c) : insertContact(trx, c));
        made.push(c);
      }
    }
    const added = audienceId
      ? (
          await addMembers(
            trx,
            audienceId,
            [...made, ...changed].map((c) => c.id),
            now,
          )
        ).length
      : 0;
    await insertEvents(trx, [
      ...(await presented(trx, projectId, made)).map((s) => contactEvent('contact.created', s, projectId, now)),
      ...(await presented(trx, projectId, changed)).map((s) => contactEvent('contact.updated', s, projectId, now)),
    ]);
    return { created: made.length, updated: changed.length, added };
  });
}

/**
 * `posthorn contacts export`: every contact of the project (or of one
 * audience), newest first, as the CSV import reads: email, first_name,
 * last_name, unsubscribed, then each declared property. Pending contacts
 * (signups not confirmed) are left out: the import has no column for it,
 * and importing the file elsewhere would subscribe addresses that never
 * confirmed.
 */
export async function exportContacts(
  deps: { store: Store },
  projectId: string,
  audienceId: string | null,
  write: (chunk: string) => void,
): Promise<number> {
  if (audienceId && !(await findAudience(deps.store.knex, projectId, audienceId)))
    throw notFound(`audience ${audienceId}`);
  const keys = (await listProperties(deps.store.knex, projectId)).map((p) => p.key);
  write(csvRow(['email', 'first_name', 'last_name', 'unsubscribed', ...keys]));
  let n = 0;
  let before: string | undefined;
  for (;;) {
    const page = await pageOfContacts(deps.store.reader, projectId, {
      limit: 1000,
      before,
      audienceId: audienceId ?? undefined,
    });
    for (const c of page.slice(0, 1000)) {
      if (c.pending) continue;
      write(
        csvRow([
          c.email,
          c.firstName ?? '',
          c.lastName ?? '',
          String(c.unsubscribed),
          ...keys.map((k) => (Object.hasOwn(c.properties, k) ? String(c.properties[k]) : '')),
        ]),
      );
      n++;
    }
    if (page.length <= 1000) return n;
    before = page[999].id;
  }
}

/** The import in its two halves and the export, for the dashboard (no /v1 route takes a file). */
export function contactImportService(deps: { store: Store; clock: Clock }) {
  return {
    prepare: (projectId: string, text: string, audienceId: string | null) =>
      prepareImport(deps, projectId, text, audienceId),
    run: (prepared: PreparedImport, progress: ImportProgress) => runImport(deps, prepared, progress),
    export: (projectId: string, audienceId: string | null, write: (chunk: string) => void) =>
      exportContacts(deps, projectId, audienceId, write),
  };
}

export type ContactImportService = ReturnType<typeof contactImportService>;
