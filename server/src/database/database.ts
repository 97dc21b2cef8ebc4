import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, Migrator, type MigrationProvider, PostgresDialect, sql } from 'kysely';
import { Pool, TypeOverrides, types as pgTypes } from 'pg';
import {
  type BusyPolicy,
  ImmediateSqliteDialect,
  isBusyError,
  SQLITE_BUSY_TIMEOUT_MS,
  withStatementCache,
} from './immediate-sqlite-dialect';
import { MIGRATIONS } from './migrations';
import type { Database } from './schema';

export type LeadsDb = Kysely<Database>;

/** The busy policy of an open database, with a count of the waits it caused (tests and ops read it). */
export interface BusyState extends BusyPolicy {
  waits: number;
}

export interface OpenOptions {
  /** DATABASE_BUSY_TIMEOUT_MS: how long an operation waits (asynchronously) for another connection's lock. */
  busyTimeoutMs?: number;
}

/** Opens the SQLite file in WAL mode with a short busy timeout and foreign keys on. */
export function openDatabase(path: string, options: OpenOptions = {}): { db: LeadsDb; sqlite: BetterSqlite3.Database; busy: BusyState } {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const sqlite = new BetterSqlite3(path);
  sqlite.pragma('journal_mode = WAL');
  // FULL: an acknowledged lead survives a power cut, not only a process crash ("never loses one").
  sqlite.pragma('synchronous = FULL');
  // A few ms at most inside SQLite (it blocks the event loop); longer waits are asynchronous retries (whileBusy).
  sqlite.pragma(`busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}`);
  sqlite.pragma('foreign_keys = ON');
  // Erased personal data is overwritten, not left in free pages (retention, /stickers_forget).
  sqlite.pragma('secure_delete = ON');
  const busy: BusyState = { timeoutMs: options.busyTimeoutMs ?? 3000, waits: 0, onWait: () => void (busy.waits += 1) };
  const db = new Kysely<Database>({
    dialect: new ImmediateSqliteDialect({ database: withStatementCache(sqlite) }, busy),
  });
  return { db, sqlite, busy };
}

/**
 * Checks at start that DATABASE_PATH can be opened as a writable SQLite database, and says why not in one line
 * (`DATABASE_PATH=<path>: cannot open: <reason>`) instead of a bare SQLite message deep in the app's start.
 */
export function databasePathProblem(path: string): string | null {
  if (path === ':memory:') return null;
  let sqlite: BetterSqlite3.Database | undefined;
  try {
    mkdirSync(dirname(path), { recursive: true });
    sqlite = new BetterSqlite3(path);
    sqlite.pragma('busy_timeout = 1000');
    sqlite.pragma('journal_mode = WAL');
    // Reads the schema (a file that is not a database fails here) and takes the write lock for a moment.
    sqlite.prepare('begin immediate').run();
    sqlite.prepare('select count(*) from sqlite_master').get();
    sqlite.prepare('rollback').run();
    return null;
  } catch (err) {
    // Locked by another connection (a backup running): the file is a database; the app waits for locks itself.
    if (isBusyError(err)) return null;
    const { message, code } = (err ?? {}) as { message?: unknown; code?: unknown };
    const reason = typeof message === 'string' ? message : String(err);
    return `DATABASE_PATH=${path}: cannot open: ${reason}${typeof code === 'string' && !reason.includes(code) ? ` (${code})` : ''}`;
  } finally {
    sqlite?.close();
  }
}

/**
 * How `bigint` (int8) values are read from PostgreSQL: as numbers, as SQLite gives its 64-bit integers, so the same
 * code and types (`number`) serve both. pg reads int8 as a string by default because a JavaScript number is exact only
 * up to 2^53 - 1; every int8 here is far below that (times in ms, ids, Telegram ids, counts), and a value beyond it is
 * refused with an error rather than rounded. (`numeric`, e.g. `sum()` of a bigint, still comes back as a string.)
 */
export function parseInt8(value: string): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n)) throw new RangeError(`bigint ${value} is beyond Number.MAX_SAFE_INTEGER: refusing to round it`);
  return n;
}

export interface PostgresOptions {
  /** Connections in the pool (pg's default: 10; DATABASE_POOL_MAX in the server). */
  max?: number;
}

/**
 * Opens a PostgreSQL database (issue 13, DATABASE_URL): Kysely's Postgres dialect over a `pg` pool whose int8 values
 * are numbers (`parseInt8`). Migrations: `migrateToLatest(db)` as for SQLite.
 */
export function openPostgres(url: string, options: PostgresOptions = {}): { db: LeadsDb; pool: Pool } {
  const types = new TypeOverrides(pgTypes);
  types.setTypeParser(pgTypes.builtins.INT8, parseInt8);
  const pool = new Pool({ connectionString: url, max: options.max, types, connectionTimeoutMillis: 10_000 });
  // An idle connection that breaks (the server restarted) is dropped by the pool and the next query opens another;
  // without a listener its 'error' event would end the process. A query that fails is rejected to its caller.
  pool.on('error', () => undefined);
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return { db, pool };
}

/** The URL without its password, for logs and error lines (`postgres://leads@db:5432/leads`). */
export function describeDatabaseUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '';
    return u.toString().replace(/:@/, '@');
  } catch {
    return 'DATABASE_URL';
  }
}

/**
 * Checks at start that DATABASE_URL reaches a PostgreSQL server that lets us create tables, and says why not in one
 * line (`DATABASE_URL=postgres://leads@db/leads: cannot connect: <reason>`), never with the password.
 */
export async function databaseUrlProblem(url: string): Promise<string | null> {
  const { db, pool } = openPostgres(url, { max: 1 });
  try {
    await sql`select 1`.execute(db);
    return null;
  } catch (err) {
    const { message, code } = (err ?? {}) as { message?: unknown; code?: unknown };
    const reason = typeof message === 'string' && message ? message : typeof code === 'string' ? code : String(err);
    return `DATABASE_URL=${describeDatabaseUrl(url)}: cannot connect: ${reason}`;
  } finally {
    await pool.end().catch(() => undefined);
  }
}

const provider: MigrationProvider = { getMigrations: () => Promise.resolve(MIGRATIONS) };

/** Runs pending migrations; throws with the failing migration's name. */
export async function migrateToLatest(db: LeadsDb): Promise<string[]> {
  const migrator = new Migrator({ db, provider });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName ?? 'unknown';
    throw new Error(`database migration ${failed} failed: ${error instanceof Error ? error.message : JSON.stringify(error)}`);
  }
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/**
 * Moves every WAL frame into the main file and truncates the WAL, so that erased values do not survive in old
 * page images (after anonymisation). False when another connection (a backup, a reader) kept it from finishing
 * within the short busy timeout: the caller should try again later.
 */
export function checkpointTruncate(sqlite: BetterSqlite3.Database): boolean {
  const [result] = sqlite.pragma('wal_checkpoint(TRUNCATE)') as { busy: number }[];
  return result?.busy === 0;
}

/** True when every known migration has been applied (for readiness). */
export async function migrationsCurrent(db: LeadsDb): Promise<boolean> {
  const migrations = await new Migrator({ db, provider }).getMigrations();
  return migrations.every((m) => m.executedAt !== undefined);
}
