// The plans SQLite makes for the app's queries, on a migrated database without statistics (as the app's own is): a read
// the app repeats must search an index, not scan a table that grows with the leads.
import type { CompiledQuery } from 'kysely';
import { migrateToLatest, openDatabase } from '../../src/database/database';

/** A migrated in-memory database; `watched` is a handle on it that keeps every query it compiles in `compiled`. */
export async function plannedDatabase() {
  const { db, sqlite } = openDatabase(':memory:');
  await migrateToLatest(db);
  const compiled: CompiledQuery[] = [];
  const watched = db.withPlugin({
    transformQuery: (args) => (compiled.push(db.getExecutor().compileQuery(args.node, args.queryId)), args.node),
    transformResult: (args) => Promise.resolve(args.result),
  });
  /** SQLite's plan for `sql`, one line a step (`SEARCH t USING INDEX …`, `SCAN t`, …). */
  const plan = (sql: string, parameters: readonly unknown[] = []) =>
    (sqlite.prepare(`explain query plan ${sql}`).all(...parameters) as { detail: string }[]).map((r) => r.detail);
  /** The entries an index holds (every cell of its b-tree is one), as SQLite's `dbstat` counts them. */
  const entries = (index: string) =>
    (sqlite.prepare('select coalesce(sum(ncell), 0) as n from dbstat where name = ?').get(index) as { n: number }).n;
  return { db, sqlite, watched, compiled, plan, entries };
}
