import { statSync } from 'node:fs';
import { Global, Inject, Injectable, Logger, Module, type OnApplicationShutdown } from '@nestjs/common';
import type BetterSqlite3 from 'better-sqlite3';
import { SERVER_CONFIG } from '../config/config.module';
import type { ServerConfig } from '../config/config';
import { type LeadsDb, migrateToLatest, openDatabase } from './database';
import { WriteHealth } from './write-health';

/** The open database: Kysely for queries, the raw handle for pragmas and checkpoints. */
@Injectable()
export class DatabaseHandle implements OnApplicationShutdown {
  private readonly logger = new Logger('Database');
  private closed = false;
  /** The file's inode when it was opened: a different (or no) file at the path later means the database is gone. */
  readonly inode: number | null;

  constructor(
    readonly db: LeadsDb,
    readonly sqlite: BetterSqlite3.Database,
    readonly path: string,
  ) {
    this.inode = path === ':memory:' ? null : statSync(path).ino;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.db.destroy();
    this.logger.log('database closed');
  }
}

export const DB = Symbol('LeadsDb');

/** Injects the Kysely instance into repositories. */
export const InjectDb = () => Inject(DB);
@Global()
@Module({
  providers: [
    {
      provide: DatabaseHandle,
      inject: [SERVER_CONFIG],
      useFactory: async (config: ServerConfig) => {
        const { db, sqlite } = openDatabase(config.databasePath);
        const applied = await migrateToLatest(db);
        if (applied.length > 0) new Logger('Database').log(`migrations applied: ${applied.join(', ')}`);
        return new DatabaseHandle(db, sqlite, config.databasePath);
      },
    },
    { provide: DB, inject: [DatabaseHandle], useFactory: (h: DatabaseHandle) => h.db },
    WriteHealth,
  ],
  exports: [DatabaseHandle, DB, WriteHealth],
})
export class DatabaseModule {}
