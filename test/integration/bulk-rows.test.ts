import { expect } from 'chai';
import { insertRows, insertRowsIgnoring } from '../../src/store/insert-rows.js';
import { updateRows } from '../../src/store/update-rows.js';
import { eachDatabase } from '../helpers/databases.js';

// The store's bulk statements, on both databases: the webhook dispatcher records a batch of attempts
// with one UPDATE per 64 rows (issue 41), and a row it no longer holds must stay as another wrote it.
eachDatabase('bulk rows', (db) => {
  let n = 0;

  before(async function () {
    // a table of its own, with a column of each type the statements cast to, one of them nullable
    await db().store.knex.schema.createTable('bulk_rows', (t) => {
      t.string('id', 40).primary();
      t.string('host', 40).nullable();
      t.integer('pid').notNullable();
      t.string('version', 10).notNullable();
      t.bigInteger('started_at').notNullable();
      t.bigInteger('heartbeat_at').notNullable();
    });
  });

  async function nodes(count: number): Promise<string[]> {
    const ids = Array.from({ length: count }, (_, i) => `row_${++n}_${i}`);
    await insertRows(
      db().store.knex,
      'bulk_rows',
      ids.map((id, i) => ({ id, host: 'h', pid: i, version: 'v1', started_at: 1, heartbeat_at: 1 })),
    );
    return ids;
  }

  it('updates 100 rows to values of their own in chunks, only those the condition holds, and answers their keys', async function () {
    const ids = await nodes(100);
    // a quarter already taken by another writer: the condition (version v1) no longer holds for them
    const taken = ids.filter((_, i) => i % 4 === 0);
    await db().store.knex('bulk_rows').whereIn('id', taken).update({ version: 'v2' });
    const updated = await db().store.tx((trx) =>
      updateRows(
        trx,
        'bulk_rows',
        ids.map((id, i) => ({ id, pid: 1000 + i, heartbeat_at: 2 ** 40 + i, host: i % 2 ? null : `host-${i}` })),
        {
          key: 'id',
          types: { id: 'text', pid: 'integer', heartbeat_at: 'bigint', host: 'text' },
          constant: { started_at: 7 },
          where: { version: 'v1' },
        },
      ),
    );
    expect(new Set(updated)).to.deep.equal(new Set(ids.filter((id) => !taken.includes(id))));
    const rows = (await db().store.knex('bulk_rows').whereIn('id', ids).orderBy('pid')) as Array<
      Record<string, unknown>
    >;
    for (const r of rows) {
      const i = ids.indexOf(r.id as string);
      if (taken.includes(r.id as string)) expect(r).to.include({ version: 'v2', pid: i, host: 'h' });
      else {
        expect(Number(r.pid)).to.equal(1000 + i);
        expect(Number(r.heartbeat_at)).to.equal(2 ** 40 + i);
        expect(Number(r.started_at)).to.equal(7);
        expect(r.host).to.equal(i % 2 ? null : `host-${i}`);
      }
    }
  });

  it('writes nothing and answers nothing for no rows, or when no row matches', async function () {
    expect(await updateRows(db().store.knex, 'bulk_rows', [], { key: 'id', types: { id: 'text' } })).to.deep.equal([]);
    const none = await updateRows(db().store.knex, 'bulk_rows', [{ id: 'row_missing', pid: 1 }], {
      key: 'id',
      types: { id: 'text', pid: 'integer' },
    });
    expect(none).to.deep.equal([]);
  });

  it('inserts 70 rows skipping those already there, answering the keys of those it inserted', async function () {
    const ids = await nodes(5);
    const fresh = Array.from({ length: 65 }, (_, i) => `row_fresh_${++n}_${i}`);
    const inserted = await insertRowsIgnoring(
      db().store.knex,
      'bulk_rows',
      [...ids, ...fresh].map((id) => ({ id, host: 'again', pid: 0, version: 'v9', started_at: 2, heartbeat_at: 2 })),
      ['id'],
    );
    expect(inserted.map((r) => r.id).sort()).to.deep.equal([...fresh].sort());
    const kept = await db().store.knex('bulk_rows').whereIn('id', ids).where('host', 'h');
    expect(kept).to.have.length(5);
  });
});
