import { mkdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, Migrator, type MigrationProvider, PostgresDialect, sql } from 'kysely';
import { Pool, type PoolClient, TypeOverrides, types as pgTypes } from 'pg';
import { withoutPasswords } from '@stickers/shared';
import { type BusyPolicy, ImmediateSqliteDialect, isBusyError, SQLITE_BUSY_TIMEOUT_MS } from './immediate-sqlite-dialect';
import { MIGRATIONS } from './migrations';
import type { Database } from './schema';

export type LeadsDb = Kysely<Database>;

/** The busy policy of an open database, with a count of the waits it caused. */
export interface BusyState extends BusyPolicy {
  waits: number;
}

/** Opens the SQLite file in WAL mode; `busyTimeoutMs`: how long a lock is waited for. */
export function openDatabase(path: string, options: { busyTimeoutMs?: number } = {}) {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  // busy_timeout: a few ms at most inside SQLite (it blocks the event loop); longer waits are asynchronous retries (whileBusy).
  const sqlite = new BetterSqlite3(path, { timeout: SQLITE_BUSY_TIMEOUT_MS });
  sqlite.pragma('journal_mode = WAL');
  // FULL: an acknowledged lead survives a power cut, not only a process crash ("never loses one").
  sqlite.pragma('synchronous = FULL');
  sqlite.pragma('foreign_keys = ON');
  // Erased personal data is overwritten, not left in free pages (retention, /stickers_forget).
  sqlite.pragma('secure_delete = ON');
  // Temporary files in memory: a submit's statement journal (each decision is a savepoint, and a lead's insert with its
  // triggers journals more than the 64 KiB SQLite keeps in memory) no longer spills to a file, which wrote as much per
  // lead as the WAL did, and left page images of personal data in deleted files.
  sqlite.pragma('temp_store = MEMORY');
  // SQLite's lower() folds ASCII only; the inbox's search folds names in any script (dialect-sql.ts).
  sqlite.function('unicode_lower', { deterministic: true }, (v: unknown) => (typeof v === 'string' ? v.toLowerCase() : v) as string | null);
  const busy: BusyState = { timeoutMs: options.busyTimeoutMs ?? 3000, waits: 0, onWait: () => void (busy.waits += 1) };
  const db = new Kysely<Database>({ dialect: new ImmediateSqliteDialect(sqlite, busy) });
  return { db, sqlite, busy };
}

/** Checks at start that DATABASE_PATH opens as a writable SQLite database, else says why in one line. */
export function databasePathProblem(path: string): string | null {
  if (path === ':memory:') return null;
  // Said plainly rather than as the system's EEXIST or SQLITE_CANTOPEN: a file on the way, a folder named as the file.
  const statOf = (p: string) => {
    try {
      return statSync(p);
    } catch {
      return undefined;
    }
  };
  for (let dir = dirname(path); dir !== dirname(dir); dir = dirname(dir)) {
    const stat = statOf(dir);
    if (stat && !stat.isDirectory()) return `DATABASE_PATH=${path}: cannot open: ${dir} is not a folder`;
  }
  if (statOf(path)?.isDirectory())
    return `DATABASE_PATH=${path}: cannot open: it is a folder: name the database file in it (e.g. ${join(path, 'leads.sqlite')})`;
  let sqlite: BetterSqlite3.Database | undefined;
  try {
    // Personal data: the folder it creates is the owner's only, as the landing's spool.
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    sqlite = new BetterSqlite3(path, { timeout: 1000 });
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

/** PostgreSQL's `bigint` as a number, as SQLite gives it; one beyond 2^53 is refused, not rounded (`numeric` stays a string). */
function parseInt8(value: string): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n)) throw new RangeError(`bigint ${value} is beyond Number.MAX_SAFE_INTEGER: refusing to round it`);
  return n;
}

/** The sessions' bounds (none when not given: the CLI, migrations). */
interface PostgresOptions {
  max?: number;
  connectTimeoutMs?: number;
  lockTimeoutMs?: number;
  statementTimeoutMs?: number;
  idleInTransactionTimeoutMs?: number;
  /** Told once of each connection that broke (the pool drops it). */
  onConnectionLost?: (err: Error) => void;
}

/** Opens DATABASE_URL. A fault never ends the process nor poisons the pool: a connection handed back broken, or in a transaction, is closed. */
export function openPostgres(url: string, options: PostgresOptions = {}): { db: LeadsDb; pool: Pool } {
  const types = new TypeOverrides(pgTypes);
  types.setTypeParser(pgTypes.builtins.INT8, parseInt8);
  const pool = new Pool({
    connectionString: url,
    max: options.max,
    types,
    // At least a second: the same bound covers opening a new connection, which takes longer on a loaded host.
    connectionTimeoutMillis: Math.max(1000, options.connectTimeoutMs ?? 10_000),
    // TCP keepalive both ways: a vanished host's locks go after about 10 + 3 × 5 s, not the kernel's two hours.
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
    options: '-c tcp_keepalives_idle=10 -c tcp_keepalives_interval=5 -c tcp_keepalives_count=3',
    // PostgreSQL's 0 is "wait for ever"; DATABASE_BUSY_TIMEOUT_MS=0 means not waiting: 1 ms.
    ...(options.lockTimeoutMs !== undefined ? { lock_timeout: Math.max(1, Math.trunc(options.lockTimeoutMs)) } : {}),
    ...(options.statementTimeoutMs ? { statement_timeout: options.statementTimeoutMs } : {}),
    ...(options.idleInTransactionTimeoutMs ? { idle_in_transaction_session_timeout: options.idleInTransactionTimeoutMs } : {}),
  });
  const broken = new WeakSet<PoolClient>();
  pool.on('connect', (client) => {
    client.on('error', (err) => {
      if (broken.has(client)) return;
      broken.add(client);
      options.onConnectionLost?.(err);
    });
  });
  pool.on('release', (err, client) => {
    if (!err && (broken.has(client) || client.getTransactionStatus() !== 'I')) void client.end().catch(() => undefined);
  });
  pool.on('error', () => undefined);
  // No connection to be had (server down, password changed, pool exhausted) is a storage error.
  const connecting = {
    connect: () =>
      pool.connect().catch((err: unknown) => {
        throw new DatabaseUnreachableError(err);
      }),
    end: () => pool.end(),
  };
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: connecting }) });
  return { db, pool };
}

/** No connection to PostgreSQL could be had; `cause` is pg's error. */
class DatabaseUnreachableError extends Error {
  readonly code = 'DATABASE_UNREACHABLE';
  constructor(cause: unknown) {
    const { message, code } = (cause ?? {}) as { message?: unknown; code?: unknown };
    const reason = typeof message === 'string' ? message : String(cause);
    super(`no connection to the database: ${reason}${typeof code === 'string' ? ` (${code})` : ''}`, { cause });
  }
}

/** The URL without its password, for logs and error lines. */
export function describeDatabaseUrl(url: string): string {
  return URL.canParse(url) ? withoutPasswords(url) : 'DATABASE_URL';
}

/** Checks at start that DATABASE_URL reaches PostgreSQL, else says why in one line, never with the password. */
export async function databaseUrlProblem(url: string): Promise<string | null> {
  const { db, pool } = openPostgres(url, { max: 1 });
  try {
    await sql`select 1`.execute(db);
    return null;
  } catch (thrown) {
    const err = thrown instanceof DatabaseUnreachableError ? thrown.cause : thrown;
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

/** Truncates the WAL so erased values do not survive in old page images; false when another connection kept it. */
export function checkpointTruncate(sqlite: BetterSqlite3.Database): boolean {
  const [result] = sqlite.pragma('wal_checkpoint(TRUNCATE)') as { busy: number }[];
  return result?.busy === 0;
}

export async function migrationsCurrent(db: LeadsDb): Promise<boolean> {
  const migrations = await new Migrator({ db, provider }).getMigrations();
  return migrations.every((m) => m.executedAt !== undefined);
}
