import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, Migrator, type MigrationProvider, PostgresDialect, sql } from 'kysely';
import { Pool, type PoolClient, TypeOverrides, types as pgTypes } from 'pg';
import { withoutPasswords } from '@stickers/shared';
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

/**
 * Opens the SQLite file in WAL mode with a short busy timeout and foreign keys on; `busyTimeoutMs`
 * (DATABASE_BUSY_TIMEOUT_MS) is how long an operation waits, asynchronously, for another connection's lock.
 */
export function openDatabase(
  path: string,
  options: { busyTimeoutMs?: number } = {},
): { db: LeadsDb; sqlite: BetterSqlite3.Database; busy: BusyState } {
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
  // SQLite's lower() folds ASCII only; the inbox's search folds names in any script (dialect-sql.ts).
  sqlite.function('unicode_lower', { deterministic: true }, (v: unknown) => (typeof v === 'string' ? v.toLowerCase() : v) as string | null);
  const busy: BusyState = { timeoutMs: options.busyTimeoutMs ?? 3000, waits: 0, onWait: () => void (busy.waits += 1) };
  const db = new Kysely<Database>({
    dialect: new ImmediateSqliteDialect({ database: withStatementCache(sqlite) }, busy),
  });
  return { db, sqlite, busy };
}

/** Checks at start that DATABASE_PATH opens as a writable SQLite database, else says why in one line. */
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
 * PostgreSQL's `bigint` read as a number, as SQLite gives its 64-bit integers, so the same code serves both: every
 * int8 here (times, ids, counts) is far below 2^53, and one beyond is refused rather than rounded. (`numeric`, e.g.
 * `sum()` of a bigint, still comes back as a string.)
 */
function parseInt8(value: string): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n)) throw new RangeError(`bigint ${value} is beyond Number.MAX_SAFE_INTEGER: refusing to round it`);
  return n;
}

interface PostgresOptions {
  /** Connections in the pool (pg's default: 10; DATABASE_POOL_MAX). */
  max?: number;
  /** How long a query waits for a connection (a storage error then: 503); 10 s when not given. */
  connectTimeoutMs?: number;
  /** `lock_timeout` of every session: how long a statement waits for another session's lock, then 55P03. */
  lockTimeoutMs?: number;
  /** `statement_timeout` of every session (DATABASE_STATEMENT_TIMEOUT_MS); none when not given (the CLI, migrations). */
  statementTimeoutMs?: number;
  /** `idle_in_transaction_session_timeout` of every session (DATABASE_IDLE_TX_TIMEOUT_MS); none when not given. */
  idleInTransactionTimeoutMs?: number;
  /** Told once of each connection that broke (checked out or idle); the pool drops it and opens another when asked. */
  onConnectionLost?: (err: Error) => void;
}

/**
 * TCP keepalive on both ends of every connection: the server gives up on a silent instance after about 10 + 3 × 5 s,
 * so a host that vanished while it held a lock does not hold it for the kernel's two hours.
 */
const KEEPALIVE = { idleSec: 10, intervalSec: 5, count: 3 };

/**
 * Opens a PostgreSQL database (DATABASE_URL): Kysely over a `pg` pool whose int8 values are numbers. A database fault
 * never ends the process nor poisons the pool: every connection has an `error` listener from the moment it exists
 * (an unheard one ends the process), and one handed back broken, or still inside a transaction, is closed.
 */
export function openPostgres(url: string, options: PostgresOptions = {}): { db: LeadsDb; pool: Pool } {
  const types = new TypeOverrides(pgTypes);
  types.setTypeParser(pgTypes.builtins.INT8, parseInt8);
  const sessionOptions = [
    `-c tcp_keepalives_idle=${KEEPALIVE.idleSec}`,
    `-c tcp_keepalives_interval=${KEEPALIVE.intervalSec}`,
    `-c tcp_keepalives_count=${KEEPALIVE.count}`,
  ].join(' ');
  const pool = new Pool({
    connectionString: url,
    max: options.max,
    types,
    // At least a second: the same bound covers opening a new connection, which takes longer on a loaded host.
    connectionTimeoutMillis: Math.max(1000, options.connectTimeoutMs ?? 10_000),
    keepAlive: true,
    keepAliveInitialDelayMillis: KEEPALIVE.idleSec * 1000,
    options: sessionOptions,
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
  // Before the pool decides whether to keep the connection: one ended here is dropped.
  pool.on('release', (err, client) => {
    if (err) return;
    if (broken.has(client) || client.getTransactionStatus() !== 'I') void client.end().catch(() => undefined);
  });
  // The pool re-emits an idle connection's error; the connection's own listener above has told of it.
  pool.on('error', () => undefined);
  // Whatever keeps a connection from being had (the server down, a password changed, the pool exhausted) is a storage error.
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

/** No connection to PostgreSQL could be had; `cause` is pg's error (its SQLSTATE, if the server sent one). */
export class DatabaseUnreachableError extends Error {
  readonly code = 'DATABASE_UNREACHABLE';
  constructor(cause: unknown) {
    const { message, code } = (cause ?? {}) as { message?: unknown; code?: unknown };
    super(
      `no connection to the database: ${typeof message === 'string' ? message : String(cause)}${typeof code === 'string' ? ` (${code})` : ''}`,
      {
        cause,
      },
    );
  }
}

/** The URL without its password, for logs and error lines (`postgres://leads@db:5432/leads`). */
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

/**
 * Moves every WAL frame into the main file and truncates the WAL, so that erased values do not survive in old page
 * images. False when another connection kept it from finishing: try again later.
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
