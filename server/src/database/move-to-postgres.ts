import { existsSync } from 'node:fs';
import BetterSqlite3 from 'better-sqlite3';
import { type Kysely, sql, type Transaction } from 'kysely';
import { migrateToLatest, openDatabase, openPostgres } from './database';
import type { Database } from './schema';

/** Every data table in the order copied, with the id its identity gives next (null: keyed by text); the migrations applied. */
interface MoveReport {
  tables: { table: string; rows: number; nextId: number | null }[];
  migrated: { sqlite: string[]; postgres: string[] };
}

/** PostgreSQL's protocol numbers bind parameters with 16 bits: a statement takes at most 65535. */
const MAX_BIND_PARAMETERS = 65535;
/** Not copied: each side's Kysely bookkeeping, running instances' leases, webhook mode's day of update ids. */
const NOT_COPIED = ['kysely_migration', 'kysely_migration_lock', 'leases', 'telegram_updates'];

interface SourceTable {
  name: string;
  columns: string[];
  /** The tables its foreign keys reference. */
  parents: string[];
  rows: number;
  /** sqlite_sequence's value for an AUTOINCREMENT table: the highest id ever given, even if that row is gone since. */
  sequence: number;
}

/**
 * `npm run leads -- migrate-to-postgres`: copies one snapshot of the SQLite database into the empty PostgreSQL one,
 * ids unchanged, all or nothing, both migrated first. Never merges into or overwrites a database that holds a row.
 */
export async function moveToPostgres(
  sqlitePath: string,
  postgresUrl: string,
  { log = () => undefined, batchSize = 500 }: { log?: (line: string) => void; batchSize?: number } = {},
): Promise<MoveReport> {
  if (!Number.isSafeInteger(batchSize) || batchSize < 1) throw new Error(`batch size must be a positive integer, not ${batchSize}`);
  if (!existsSync(sqlitePath)) throw new Error(`no SQLite database at ${sqlitePath} (set DATABASE_PATH): nothing to move`);

  const lite = openDatabase(sqlitePath, { busyTimeoutMs: 10_000 });
  const sqliteMigrated = await migrateToLatest(lite.db).finally(() => lite.db.destroy());
  log(`SQLite ${sqlitePath}: ${describeMigrations(sqliteMigrated)}`);

  const { db: pg } = openPostgres(postgresUrl);
  const sqlite = new BetterSqlite3(sqlitePath, { fileMustExist: true, timeout: 10_000 });
  try {
    await refuseOtherTables(pg, sqlite);
    const postgresMigrated = await migrateToLatest(pg);
    log(`PostgreSQL: ${describeMigrations(postgresMigrated)}`);
    sqlite.prepare('begin').run();
    // The snapshot starts with this first read: the tables, their rows and counts below all come from it.
    const tables = readSourceTables(sqlite);
    const moved = await pg.transaction().execute(async (trx) => {
      await checkTarget(trx, tables);
      // The rows come as they are, the outbox's with them: its triggers would queue the copied leads' work again, and
      // move a copied lead's updated_at for each of its repeats.
      await sql`alter table leads disable trigger outbox_of_leads`.execute(trx);
      await sql`alter table lead_repeats disable trigger outbox_of_repeats`.execute(trx);
      await sql`alter table lead_repeats disable trigger lead_updated_by_repeat`.execute(trx);
      const report: MoveReport['tables'] = [];
      for (const table of tables) {
        const rows = await copyTable(sqlite, trx, table, batchSize);
        const { rows: counts } = await sql<{ n: number }>`select count(*) as n from ${sql.table(table.name)}`.execute(trx);
        const counted = counts[0].n;
        if (rows !== table.rows || counted !== table.rows) {
          throw new Error(`${table.name}: ${table.rows} rows in SQLite, ${rows} copied, ${counted} in PostgreSQL: nothing was moved`);
        }
        const nextId = await continueIdentity(trx, table);
        report.push({ table: table.name, rows, nextId });
        log(`${table.name}: ${rows} ${rows === 1 ? 'row' : 'rows'}${nextId === null ? '' : `, next id ${nextId}`}`);
      }
      await sql`alter table leads enable trigger outbox_of_leads`.execute(trx);
      await sql`alter table lead_repeats enable trigger outbox_of_repeats`.execute(trx);
      await sql`alter table lead_repeats enable trigger lead_updated_by_repeat`.execute(trx);
      return report;
    });
    return { tables: moved, migrated: { sqlite: sqliteMigrated, postgres: postgresMigrated } };
  } finally {
    // Ends the read transaction (nothing was written on this connection).
    sqlite.close();
    await pg.destroy();
  }
}

function describeMigrations(applied: string[]): string {
  return applied.length === 0 ? 'migrations current' : `migrated (${applied.join(', ')})`;
}

/** Every data table of the SQLite schema, ordered so that a table comes after the tables its foreign keys reference. */
function readSourceTables(sqlite: BetterSqlite3.Database): SourceTable[] {
  const firstColumn = (query: string) => sqlite.prepare(query).pluck();
  const tableNames = firstColumn(
    `select name from sqlite_master where type = 'table' and name not like 'sqlite\\_%' escape '\\' order by name`,
  ).all() as string[];
  const tables = tableNames
    .filter((name) => !NOT_COPIED.includes(name))
    .map((name): SourceTable => {
      const columns = firstColumn('select name from pragma_table_info(?) order by cid').all(name) as string[];
      const parents = firstColumn('select distinct "table" from pragma_foreign_key_list(?)').all(name) as string[];
      const rows = firstColumn(`select count(*) from ${quote(name)}`).get() as number;
      // The migrations' AUTOINCREMENT tables make sqlite_sequence exist.
      const sequence = firstColumn('select seq from sqlite_sequence where name = ?').get(name) as number | undefined;
      return { name, columns, parents: parents.filter((parent) => parent !== name), rows, sequence: sequence ?? 0 };
    });

  // Kahn's order, alphabetical among the tables that are ready, so that the order does not depend on chance.
  const ordered: SourceTable[] = [];
  const pending = new Map(tables.map((t) => [t.name, t]));
  while (pending.size > 0) {
    const ready = [...pending.values()].find((t) => t.parents.every((parent) => !pending.has(parent)));
    if (!ready) throw new Error(`the foreign keys of ${[...pending.keys()].join(', ')} form a cycle: no order to copy them in`);
    ordered.push(ready);
    pending.delete(ready.name);
  }
  return ordered;
}

/** Fails, before anything is created there, when PostgreSQL has a table SQLite has not (a wrong URL, another app's database). */
async function refuseOtherTables(pg: Kysely<Database>, sqlite: BetterSqlite3.Database): Promise<void> {
  const ours = sqlite.prepare("select name from sqlite_master where type = 'table'").pluck().all() as string[];
  const { rows } = await sql<{ name: string }>`
    select table_name as name from information_schema.tables where table_schema = current_schema() and table_type = 'BASE TABLE'
  `.execute(pg);
  const others = rows.map((r) => r.name).filter((name) => !ours.includes(name) && !NOT_COPIED.includes(name));
  if (others.length > 0)
    throw new Error(`the PostgreSQL database has tables that are not the leads' (${others.sort().join(', ')}): nothing was moved`);
}

/** Fails unless every SQLite table has a PostgreSQL one with the same columns, and all are empty (locked first). */
async function checkTarget(trx: Transaction<Database>, tables: SourceTable[]): Promise<void> {
  const { rows: described } = await sql<{ table_name: string; column_name: string }>`
    select c.table_name, c.column_name
    from information_schema.columns c
    join information_schema.tables t on t.table_schema = c.table_schema and t.table_name = c.table_name
    where c.table_schema = current_schema() and t.table_type = 'BASE TABLE'
  `.execute(trx);
  const target = new Map<string, Set<string>>();
  for (const { table_name, column_name } of described) {
    if (NOT_COPIED.includes(table_name)) continue;
    target.set(table_name, (target.get(table_name) ?? new Set()).add(column_name));
  }

  for (const table of tables) {
    const columns = target.get(table.name);
    if (!columns) throw new Error(`the PostgreSQL database has no table ${table.name} (a table of the SQLite database): nothing was moved`);
    const onlySqlite = table.columns.filter((c) => !columns.has(c));
    const onlyPostgres = [...columns].filter((c) => !table.columns.includes(c));
    if (onlySqlite.length > 0 || onlyPostgres.length > 0) {
      throw new Error(
        `the columns of ${table.name} differ: only in SQLite: ${onlySqlite.join(', ') || 'none'}; ` +
          `only in PostgreSQL: ${onlyPostgres.join(', ') || 'none'}: nothing was moved`,
      );
    }
  }

  const names = [...target.keys()].sort();
  if (names.length === 0) return;
  await sql`lock table ${sql.join(names.map((name) => sql.table(name)))} in exclusive mode`.execute(trx);
  const holding: string[] = [];
  for (const name of names) {
    const { rows } = await sql<{ found: boolean }>`select exists (select 1 from ${sql.table(name)}) as found`.execute(trx);
    if (rows[0]?.found) holding.push(name);
  }
  if (holding.length > 0) {
    throw new Error(
      `the PostgreSQL database already holds rows (in ${holding.join(', ')}): refusing to merge into or overwrite it; ` +
        'move into a new, empty database (a server that ever started on this one has written there)',
    );
  }
}

/** Copies a table's rows from the snapshot in multi-row inserts; gives the number of rows copied. */
async function copyTable(
  sqlite: BetterSqlite3.Database,
  trx: Transaction<Database>,
  table: SourceTable,
  batchSize: number,
): Promise<number> {
  const perInsert = Math.max(1, Math.min(batchSize, Math.floor(MAX_BIND_PARAMETERS / table.columns.length)));
  const columnList = sql.join(table.columns.map((c) => sql.id(c)));
  const insert = (batch: unknown[][]) =>
    sql`insert into ${sql.table(table.name)} (${columnList}) values ${sql.join(batch.map((values) => sql`(${sql.join(values)})`))}`.execute(
      trx,
    );
  // Integers as BigInt, so that one beyond 2^53 is refused below instead of being read rounded.
  const select = sqlite
    .prepare(`select ${table.columns.map(quote).join(', ')} from ${quote(table.name)}`)
    .raw(true)
    .safeIntegers(true);
  let copied = 0;
  let batch: unknown[][] = [];
  const flush = async () => {
    if (batch.length > 0) await insert(batch);
    copied += batch.length;
    batch = [];
  };
  for (const row of select.iterate() as IterableIterator<unknown[]>) {
    batch.push(row.map((value, i) => toPostgres(value, table, table.columns[i])));
    if (batch.length === perInsert) await flush();
  }
  await flush();
  return copied;
}

/** SQLite integers become numbers (bigint on PostgreSQL); text, nulls and anything else go as they are. */
function toPostgres(value: unknown, table: SourceTable, column: string): unknown {
  if (typeof value !== 'bigint') return value;
  const n = Number(value);
  if (!Number.isSafeInteger(n)) throw new Error(`${table.name}.${column} = ${value} is beyond Number.MAX_SAFE_INTEGER: nothing was moved`);
  return n;
}

/** Sets the table's identity past every id SQLite ever gave (sqlite_sequence's too); the next id, or null without one. */
async function continueIdentity(trx: Transaction<Database>, table: SourceTable): Promise<number | null> {
  const { rows: identities } = await sql<{ column_name: string }>`
    select column_name from information_schema.columns
    where table_schema = current_schema() and table_name = ${table.name} and is_identity = 'YES'
  `.execute(trx);
  if (identities.length === 0) return null;
  if (identities.length > 1) throw new Error(`${table.name} has ${identities.length} identity columns in PostgreSQL: expected one`);
  const column = identities[0].column_name;
  const { rows } = await sql<{ copied: number | null; used: number | null }>`
    select
      (select max(${sql.id(column)}) from ${sql.table(table.name)}) as copied,
      pg_sequence_last_value(pg_get_serial_sequence(${quote(table.name)}, ${column})::regclass) as used
  `.execute(trx);
  const last = Math.max(rows[0].copied ?? 0, rows[0].used ?? 0, table.sequence);
  // An empty table whose sequence was never used: its first id is 1 as it stands.
  if (last === 0) return 1;
  await sql`select setval(pg_get_serial_sequence(${quote(table.name)}, ${column}), ${last})`.execute(trx);
  return last + 1;
}

/** A double-quoted identifier, for SQLite statements and for pg_get_serial_sequence (which parses its argument). */
function quote(identifier: string): string {
  return `"${identifier.replace(/"/g, '""')}"`;
}
