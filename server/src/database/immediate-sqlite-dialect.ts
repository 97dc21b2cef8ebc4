import { setTimeout as sleep } from 'node:timers/promises';
import type { Database as SqliteDatabase, Statement } from 'better-sqlite3';
import { CompiledQuery, type DatabaseConnection, type Driver, type QueryResult, SqliteDialect, SqliteDriver } from 'kysely';

/** How long SQLite itself may block the event loop for a lock; longer waits are `whileBusy`'s, asynchronous. */
export const SQLITE_BUSY_TIMEOUT_MS = 5;

export interface BusyPolicy {
  /** Total time one operation may wait for a lock before its SQLITE_BUSY is thrown. */
  timeoutMs: number;
  onWait?: () => void;
}

/** Another connection holds the lock. */
export function isBusyError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY');
}

/** Runs all-or-nothing `work` again while it fails with SQLITE_BUSY (pauses 2 ms doubling to 50 ms), within `policy.timeoutMs`. */
export async function whileBusy<T>(work: () => T | Promise<T>, policy: BusyPolicy): Promise<T> {
  const deadline = performance.now() + policy.timeoutMs;
  let pause = 2;
  for (;;) {
    try {
      return await work();
    } catch (err) {
      if (!isBusyError(err) || performance.now() + pause > deadline) throw err;
      policy.onWait?.();
      await sleep(pause);
      pause = Math.min(pause * 2, 50);
    }
  }
}

/**
 * Every transaction is `begin immediate` (a plain `begin` lets another writer in between our reads and writes;
 * docs/requirements.md §1.5); `begin` and every statement outside a transaction wait for a lock through `whileBusy`.
 */
class ImmediateSqliteDriver extends SqliteDriver {
  constructor(
    private readonly sqlite: SqliteDatabase,
    private readonly busy: BusyPolicy,
  ) {
    super({ database: { close: () => sqlite.close(), prepare: cachedPrepare(sqlite) } });
  }

  override async acquireConnection(): Promise<DatabaseConnection> {
    const connection = await super.acquireConnection();
    const { sqlite, busy } = this;
    return {
      executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
        if (sqlite.inTransaction) return connection.executeQuery<R>(query);
        return whileBusy(() => connection.executeQuery<R>(query), busy);
      },
      streamQuery: (query, chunkSize) => connection.streamQuery(query, chunkSize),
    };
  }

  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }
}

export class ImmediateSqliteDialect extends SqliteDialect {
  constructor(
    private readonly sqlite: SqliteDatabase,
    private readonly busy: BusyPolicy,
  ) {
    super({ database: sqlite });
  }

  override createDriver(): Driver {
    return new ImmediateSqliteDriver(this.sqlite, this.busy);
  }
}

/** Kysely prepares every statement anew; ours are a small fixed set, so each is prepared once (bounded all the same). */
export function cachedPrepare(db: SqliteDatabase, max = 500): (sql: string) => Statement {
  const cache = new Map<string, Statement>();
  return (sql) => {
    let stmt = cache.get(sql);
    if (!stmt) {
      stmt = db.prepare(sql);
      if (cache.size >= max) cache.delete(cache.keys().next().value as string);
      cache.set(sql, stmt);
    }
    return stmt;
  };
}
