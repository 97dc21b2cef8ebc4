// Which database the server tests run on: SQLite by default, PostgreSQL when LEADS_TEST_DATABASE=postgres
// (`npm test` runs the server suite once on each). On PostgreSQL one throwaway server serves the whole run
// (test/global-setup.ts starts it and passes its URL in LEADS_TEST_POSTGRES_URL); each SQLite file path a test
// names maps to its own database on it, so a test that restarts its server on the same path finds its data again.
// The app a test starts on a new database gets a copy of one migrated once per run (`migrated`), not 24 migrations of
// its own; the tests of migrations and upgrades open their databases empty and migrate them themselves.
import { constants, copyFileSync, existsSync, mkdirSync, renameSync } from 'node:fs';
import { createHash, randomUUID } from 'node:crypto';
import { dirname, join } from 'node:path';
import { Client } from 'pg';
import { migrateToLatest, openDatabase, openPostgres } from '../../src/database/database';
import type { DatabaseHandle } from '../../src/database/database.module';

export const onPostgres = process.env.LEADS_TEST_DATABASE === 'postgres';

/**
 * `describe` for a block that only makes sense on SQLite (its file, pragmas, WAL, SQLITE_FULL): on PostgreSQL it is
 * reported as skipped, by name, with the reason in the block's title.
 */
export const describeSqliteOnly: jest.Describe = onPostgres ? describe.skip : describe;
export const itSqliteOnly: jest.It = onPostgres ? it.skip : it;
export const describePostgresOnly: jest.Describe = onPostgres ? describe : describe.skip;
export const itPostgresOnly: jest.It = onPostgres ? it : it.skip;

/** The migrated PostgreSQL database the `migrated` ones are created from (nobody connects to it once it is built). */
const TEMPLATE = 'leads_migrated_template';

/**
 * The URL of the PostgreSQL database that stands for the SQLite file `dbPath`, created on first use: empty, or with
 * `migrated` a copy of the migrated template (as the app would leave a new database after its migrations).
 */
export async function postgresDatabaseFor(dbPath: string, { migrated = false } = {}): Promise<string> {
  const name = `leads_${createHash('sha256').update(dbPath).digest('hex').slice(0, 24)}`;
  try {
    await createDatabase(name, migrated);
  } catch (err) {
    // 3D000: no template yet (the run's first migrated database).
    if (!migrated || (err as { code?: string }).code !== '3D000') throw err;
    await buildPostgresTemplate();
    await createDatabase(name, migrated);
  }
  return databaseUrl(name);
}

function databaseUrl(name: string): string {
  const admin = process.env.LEADS_TEST_POSTGRES_URL;
  if (!admin) throw new Error('LEADS_TEST_DATABASE=postgres needs the server of test/global-setup.ts (LEADS_TEST_POSTGRES_URL)');
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return url.toString();
}

async function onAdmin(text: string): Promise<void> {
  const client = new Client({ connectionString: databaseUrl('postgres') });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

/** Creates the database unless it exists already (42P04: the test restarts its server on the same path). */
async function createDatabase(name: string, migrated: boolean): Promise<void> {
  try {
    // FILE_COPY: a copy of a few files, where the default (WAL_LOG) writes every page of the template through the WAL.
    await onAdmin(`create database ${name}${migrated ? ` template ${TEMPLATE} strategy file_copy` : ''}`);
  } catch (err) {
    if ((err as { code?: string }).code !== '42P04') throw err;
  }
}

/** Migrates a database of its own, then renames it the template; two workers at once: the first rename wins. */
async function buildPostgresTemplate(): Promise<void> {
  const building = `leads_building_${randomUUID().replaceAll('-', '')}`;
  await onAdmin(`create database ${building}`);
  const { db } = openPostgres(databaseUrl(building), { max: 1 });
  try {
    await migrateToLatest(db);
  } finally {
    await db.destroy();
  }
  try {
    await onAdmin(`alter database ${building} rename to ${TEMPLATE}`);
  } catch (err) {
    // 42P04 when the other rename has committed; 23505 (pg_database's unique index) when both ran at the same moment.
    if (!['42P04', '23505'].includes((err as { code?: string }).code ?? '')) throw err;
    await onAdmin(`drop database ${building}`);
  }
}

/**
 * Puts a copy of a migrated SQLite file at `path` when there is no file there yet, so the app that opens it next finds
 * its migrations applied. The template is built once per run in LEADS_TEST_TEMPLATES (test/global-setup.ts); without
 * it, or when the copy cannot be made (a path a test made impossible), the app meets the path as it is.
 */
export async function migratedSqliteAt(path: string): Promise<void> {
  const dir = process.env.LEADS_TEST_TEMPLATES;
  if (!dir || path === ':memory:' || existsSync(path)) return;
  const template = join(dir, 'migrated.sqlite');
  if (!existsSync(template)) {
    // Two workers at once: each builds its own and renames it into place; either file is the same schema.
    const building = `${template}.${randomUUID()}`;
    const { db } = openDatabase(building);
    try {
      await migrateToLatest(db);
    } finally {
      await db.destroy();
    }
    renameSync(building, template);
  }
  try {
    mkdirSync(dirname(path), { recursive: true });
    copyFileSync(template, path, constants.COPYFILE_EXCL);
  } catch {
    /* the app meets the path as it is */
  }
}

/** `?` placeholders as PostgreSQL's `$1, $2, …` (outside quoted strings). */
function numbered(text: string): string {
  let n = 0;
  let quoted = false;
  let out = '';
  for (const ch of text) {
    if (ch === "'") quoted = !quoted;
    out += ch === '?' && !quoted ? `$${++n}` : ch;
  }
  return out;
}

/**
 * Runs one SQL statement on the test server's database, SQLite or PostgreSQL alike, with `?` placeholders; the rows
 * it returns (a write returns none). Tests write the SQL both accept.
 */
export async function sqlRows<T = Record<string, unknown>>(db: DatabaseHandle, text: string, ...params: unknown[]): Promise<T[]> {
  if (db.kind === 'sqlite') {
    const statement = db.sqlite.prepare(text);
    if (statement.reader) return statement.all(...params) as T[];
    statement.run(...params);
    return [];
  }
  const result = await db.pool!.query(numbered(text), params);
  return result.rows as T[];
}

/** The first row of `sqlRows`, or undefined. */
export async function sqlRow<T = Record<string, unknown>>(db: DatabaseHandle, text: string, ...params: unknown[]): Promise<T | undefined> {
  return (await sqlRows<T>(db, text, ...params))[0];
}

/** Runs a write; the number of rows it changed. */
export async function sqlRun(db: DatabaseHandle, text: string, ...params: unknown[]): Promise<number> {
  if (db.kind === 'sqlite') return db.sqlite.prepare(text).run(...params).changes;
  const result = await db.pool!.query(numbered(text), params);
  return result.rowCount ?? 0;
}

/** The code a write refused by `refuseWrites` fails with. */
export const READONLY_CODE = onPostgres ? '25006' : 'SQLITE_READONLY';

/**
 * The database refuses every write from now on: on SQLite with SQLITE_READONLY (query_only), as a file system
 * remounted read-only does; on PostgreSQL with its own read-only error (25006, as a primary turned standby gives),
 * raised by a trigger on every table of the app, since the pool's open sessions cannot be switched to read-only.
 */
export async function refuseWrites(db: DatabaseHandle): Promise<void> {
  if (db.kind === 'sqlite') {
    db.sqlite.pragma('query_only = 1');
    return;
  }
  await sqlRun(
    db,
    `create or replace function test_refuse_writes() returns trigger language plpgsql as $$
     begin
       raise exception 'cannot execute % in a read-only transaction', tg_op using errcode = 'read_only_sql_transaction';
     end $$`,
  );
  await sqlRun(
    db,
    `do $$ declare t text;
     begin
       for t in select tablename from pg_tables where schemaname = current_schema() and tablename not like 'kysely%' loop
         execute format('create trigger test_refuse_writes before insert or update or delete on %I for each statement execute function test_refuse_writes()', t);
       end loop;
     end $$`,
  );
}

/** Writes work again (after `refuseWrites`). */
export async function allowWrites(db: DatabaseHandle): Promise<void> {
  if (db.kind === 'sqlite') {
    db.sqlite.pragma('query_only = 0');
    return;
  }
  await sqlRun(
    db,
    `do $$ declare t text;
     begin
       for t in select tablename from pg_tables where schemaname = current_schema() loop
         execute format('drop trigger if exists test_refuse_writes on %I', t);
       end loop;
     end $$`,
  );
}
