import { statSync } from 'node:fs';
import { Global, Inject, Injectable, Logger, Module, type OnApplicationShutdown } from '@nestjs/common';
import type BetterSqlite3 from 'better-sqlite3';
import { SERVER_CONFIG } from '../config/config.module';
import type { ServerConfig } from '../config/config';
import { Pool } from 'pg';
import { type BusyState, describeDatabaseUrl, type LeadsDb, migrateToLatest, openDatabase, openPostgres } from './database';
import { whileBusy } from './immediate-sqlite-dialect';
import { WriteHealth } from './write-health';

/**
 * The file at DATABASE_PATH is no longer the one the server opened (deleted, or replaced): writes would land in a file
 * nobody will open again, so the submit path refuses instead of acknowledging.
 */
export class DatabaseGoneError extends Error {
  readonly code = 'DATABASE_FILE_GONE';
  constructor(path: string) {
    super(`database file ${path} is gone or was replaced`);
  }
}

/**
 * The open database: Kysely for queries, and the raw handle of the engine underneath for what Kysely does not do
 * (SQLite's pragmas, checkpoints and synchronous transactions; PostgreSQL's pool). Only the repositories and this
 * folder look at `kind`.
 */
@Injectable()
export class DatabaseHandle implements OnApplicationShutdown {
  private readonly logger = new Logger('Database');
  private closed = false;
  /** The file's device and inode when it was opened: another (or no) file at the path later means it is gone. */
  private readonly opened: { dev: number; ino: number } | null;
  /** The lock-wait policy shared with the Kysely driver; `busy.waits` counts the waits. */
  readonly busy: BusyState;
  readonly kind: 'sqlite' | 'postgres';
  /** PostgreSQL's pool; null on SQLite. */
  readonly pool: Pool | null;
  private readonly rawSqlite: BetterSqlite3.Database | null;

  /** @param path where the data lives, for log lines: the SQLite file, or the PostgreSQL URL without its password. */
  constructor(
    readonly db: LeadsDb,
    engine: BetterSqlite3.Database | Pool,
    readonly path: string,
    busy?: BusyState,
  ) {
    this.kind = engine instanceof Pool ? 'postgres' : 'sqlite';
    this.pool = engine instanceof Pool ? engine : null;
    this.rawSqlite = engine instanceof Pool ? null : engine;
    this.opened = this.kind === 'postgres' || path === ':memory:' ? null : statSync(path);
    this.busy = busy ?? { timeoutMs: 0, waits: 0 };
  }

  /** SQLite's raw handle. Only on SQLite: code that needs it is SQLite's path (a test that needs it says so). */
  get sqlite(): BetterSqlite3.Database {
    if (!this.rawSqlite) throw new Error('the database is PostgreSQL: there is no SQLite handle');
    return this.rawSqlite;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** True while the file at the path is still the one opened (one `stat`, about 1.5 µs); always on PostgreSQL. */
  fileIsCurrent(): boolean {
    if (this.opened === null) return true;
    const stat = statSync(this.path, { throwIfNoEntry: false });
    return stat !== undefined && stat.ino === this.opened.ino && stat.dev === this.opened.dev;
  }

  assertFileCurrent(): void {
    if (!this.fileIsCurrent()) throw new DatabaseGoneError(this.path);
  }

  /** Runs an all-or-nothing `work` again while SQLite is locked by another connection, within the bound. */
  whileBusy<T>(work: () => T | Promise<T>): Promise<T> {
    return whileBusy(work, this.busy);
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.db.destroy();
    this.logger.log('database closed');
  }
}

/** Opens the database the configuration names: PostgreSQL when DATABASE_URL is set, else the SQLite file. */
export function openHandle(config: ServerConfig): DatabaseHandle {
  const busy: BusyState = { timeoutMs: config.databaseBusyTimeoutMs, waits: 0 };
  if (config.databaseUrl) {
    const logger = new Logger('Database');
    const { db, pool } = openPostgres(config.databaseUrl, {
      max: config.databasePoolMax,
      connectTimeoutMs: config.databaseBusyTimeoutMs,
      lockTimeoutMs: config.databaseBusyTimeoutMs,
      statementTimeoutMs: config.databaseStatementTimeoutMs,
      idleInTransactionTimeoutMs: config.databaseIdleTxTimeoutMs,
      // Once per connection; the next query opens another (the instance answers 503 until PostgreSQL is back).
      onConnectionLost: (err) => logger.warn({ msg: 'database connection lost', error: err.message }),
    });
    return new DatabaseHandle(db, pool, describeDatabaseUrl(config.databaseUrl), busy);
  }
  const opened = openDatabase(config.databasePath, { busyTimeoutMs: config.databaseBusyTimeoutMs });
  return new DatabaseHandle(opened.db, opened.sqlite, config.databasePath, opened.busy);
}

/**
 * Applies pending migrations; on PostgreSQL through a connection without the sessions' statement bounds (a migration
 * may rewrite a big table, and waits for another instance's migration lock).
 */
async function migrate(config: ServerConfig, handle: DatabaseHandle): Promise<string[]> {
  if (!config.databaseUrl) return migrateToLatest(handle.db);
  const { db } = openPostgres(config.databaseUrl, { max: 1 });
  try {
    return await migrateToLatest(db);
  } finally {
    await db.destroy();
  }
}

const DB = Symbol('LeadsDb');

/** Injects the Kysely instance into repositories. */
export const InjectDb = () => Inject(DB);
@Global()
@Module({
  providers: [
    {
      provide: DatabaseHandle,
      inject: [SERVER_CONFIG],
      useFactory: async (config: ServerConfig) => {
        const handle = openHandle(config);
        try {
          // Several instances starting at once on PostgreSQL: Kysely's migrator takes a lock, one migrates, the others wait.
          const applied = await migrate(config, handle);
          if (applied.length > 0) new Logger('Database').log(`migrations applied: ${applied.join(', ')}`);
        } catch (err) {
          await handle.db.destroy();
          throw err;
        }
        return handle;
      },
    },
    { provide: DB, inject: [DatabaseHandle], useFactory: (h: DatabaseHandle) => h.db },
    WriteHealth,
  ],
  exports: [DatabaseHandle, DB, WriteHealth],
})
export class DatabaseModule {}
