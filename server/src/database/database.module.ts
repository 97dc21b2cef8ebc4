import { statSync } from 'node:fs';
import { Global, Inject, Injectable, Logger, Module, type OnApplicationShutdown } from '@nestjs/common';
import type BetterSqlite3 from 'better-sqlite3';
import { SERVER_CONFIG } from '../config/config.module';
import type { ServerConfig } from '../config/config';
import { Pool } from 'pg';
import { type BusyState, describeDatabaseUrl, type LeadsDb, migrateToLatest, openDatabase, openPostgres } from './database';
import { WriteHealth } from './write-health';

/** The file at DATABASE_PATH is not the one opened (deleted or replaced). */
export class DatabaseGoneError extends Error {
  readonly code = 'DATABASE_FILE_GONE';
  constructor(path: string) {
    super(`database file ${path} is gone or was replaced`);
  }
}

/** The open database: Kysely, and the engine's raw handle for what Kysely does not do (pragmas, checkpoints, the pool). */
@Injectable()
export class DatabaseHandle implements OnApplicationShutdown {
  private readonly logger = new Logger('Database');
  isClosed = false;
  /** The file's device and inode when it was opened. */
  private readonly opened: { dev: number; ino: number } | null;
  readonly kind: 'sqlite' | 'postgres';
  readonly pool: Pool | null;
  private readonly rawSqlite: BetterSqlite3.Database | null;

  /** @param path for log lines: the SQLite file, or the PostgreSQL URL without its password. */
  constructor(
    readonly db: LeadsDb,
    engine: BetterSqlite3.Database | Pool,
    readonly path: string,
    readonly busy: BusyState,
  ) {
    this.kind = engine instanceof Pool ? 'postgres' : 'sqlite';
    this.pool = engine instanceof Pool ? engine : null;
    this.rawSqlite = engine instanceof Pool ? null : engine;
    this.opened = this.kind === 'postgres' || path === ':memory:' ? null : statSync(path);
  }

  /** SQLite's raw handle; throws on PostgreSQL. */
  get sqlite(): BetterSqlite3.Database {
    if (!this.rawSqlite) throw new Error('the database is PostgreSQL: there is no SQLite handle');
    return this.rawSqlite;
  }

  /** One `stat`; always true on PostgreSQL. */
  fileIsCurrent(): boolean {
    if (this.opened === null) return true;
    const stat = statSync(this.path, { throwIfNoEntry: false });
    return stat !== undefined && stat.ino === this.opened.ino && stat.dev === this.opened.dev;
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.isClosed) return;
    this.isClosed = true;
    await this.db.destroy();
    this.logger.log('database closed');
  }
}

/** Opens the database the configuration names: PostgreSQL when DATABASE_URL is set, else the SQLite file. */
export function openHandle(config: ServerConfig): DatabaseHandle {
  const busy: BusyState = { timeoutMs: config.databaseBusyTimeoutMs, waits: 0 };
  if (config.databaseUrl) {
    const { db, pool } = openPostgres(config.databaseUrl, {
      max: config.databasePoolMax,
      connectTimeoutMs: config.databaseBusyTimeoutMs,
      lockTimeoutMs: config.databaseBusyTimeoutMs,
      statementTimeoutMs: config.databaseStatementTimeoutMs,
      idleInTransactionTimeoutMs: config.databaseIdleTxTimeoutMs,
      // Once per connection; the next query opens another (the instance answers 503 until PostgreSQL is back).
      onConnectionLost: (err) => new Logger('Database').warn({ msg: 'database connection lost', error: err.message }),
    });
    return new DatabaseHandle(db, pool, describeDatabaseUrl(config.databaseUrl), busy);
  }
  const opened = openDatabase(config.databasePath, { busyTimeoutMs: config.databaseBusyTimeoutMs });
  return new DatabaseHandle(opened.db, opened.sqlite, config.databasePath, opened.busy);
}

/** Applies pending migrations; on PostgreSQL over a connection without the sessions' statement bounds. */
async function migrate(config: ServerConfig, handle: DatabaseHandle): Promise<string[]> {
  if (!config.databaseUrl) return migrateToLatest(handle.db);
  const { db } = openPostgres(config.databaseUrl, { max: 1 });
  return migrateToLatest(db).finally(() => db.destroy());
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
