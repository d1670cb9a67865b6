import { expect } from 'chai';
import type { Knex } from 'knex';
import { eachDatabase } from '../helpers/databases.js';

// What a store transaction promises whoever writes through it (on SQLite they run without a knex
// transaction object of their own: src/store/sqlite-transaction.ts): all or nothing, nobody
// else's statement inside it, a nested transaction a savepoint, and nothing run after it ended.

const keysLike = async (knex: Knex, prefix: string) =>
  ((await knex('meta').where('key', 'like', `${prefix}%`).pluck('key')) as string[]).sort();

eachDatabase('store transactions', (db) => {
  it('a transaction that fails stores nothing of what it wrote, and the error is its own', async function () {
    const { store } = db();
    const prefix = `tx-fail-${Date.now()}-`;
    const failed = await store
      .tx(async (trx) => {
        await trx('meta').insert({ key: `${prefix}a`, value: 'v' });
        throw new Error('the job failed');
      })
      .catch((e: Error) => e.message);
    expect(failed).to.equal('the job failed');
    expect(await keysLike(store.knex, prefix)).to.deep.equal([]);
    // and the connection is usable after it: the next transaction commits
    await store.tx((trx) => trx('meta').insert({ key: `${prefix}b`, value: 'v' }));
    expect(await keysLike(store.knex, prefix)).to.deep.equal([`${prefix}b`]);
  });

  it("another writer's statement does not run inside an open transaction: it stays when that one rolls back", async function () {
    const { store } = db();
    const prefix = `tx-iso-${Date.now()}-`;
    let outside: Promise<unknown> = Promise.resolve();
    const failed = store.tx(async (trx) => {
      await trx('meta').insert({ key: `${prefix}inside`, value: 'v' });
      // a write of the same process, not of this transaction, started while it is open
      outside = store.tx((other) => other('meta').insert({ key: `${prefix}outside`, value: 'v' }));
      await new Promise((r) => setTimeout(r, 20));
      throw new Error('rolled back');
    });
    await failed.catch(() => undefined);
    await outside;
    expect(await keysLike(store.knex, prefix)).to.deep.equal([`${prefix}outside`]);
  });

  it('a nested transaction that fails takes back its own writes only', async function () {
    const { store } = db();
    const prefix = `tx-nest-${Date.now()}-`;
    await store.tx(async (trx) => {
      await trx('meta').insert({ key: `${prefix}outer`, value: 'v' });
      await trx
        .transaction(async (inner) => {
          await inner('meta').insert({ key: `${prefix}inner`, value: 'v' });
          throw new Error('inner fails');
        })
        .catch(() => undefined);
      await trx.transaction((inner) => inner('meta').insert({ key: `${prefix}kept`, value: 'v' }));
    });
    expect(await keysLike(store.knex, prefix)).to.deep.equal([`${prefix}kept`, `${prefix}outer`]);
  });

  it('a query run on a transaction after it ended fails instead of writing outside it', async function () {
    const { store } = db();
    const prefix = `tx-late-${Date.now()}-`;
    let kept: Knex.Transaction | null = null;
    await store.tx(async (trx) => {
      kept = trx;
      await trx('meta').insert({ key: `${prefix}in`, value: 'v' });
    });
    const late = await kept!('meta')
      .insert({ key: `${prefix}late`, value: 'v' })
      .then(
        () => 'stored',
        (e: Error) => e.message,
      );
    expect(late).to.not.equal('stored');
    expect(await keysLike(store.knex, prefix)).to.deep.equal([`${prefix}in`]);
  });
});
