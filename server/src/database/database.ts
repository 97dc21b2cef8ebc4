import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, Migrator, type MigrationProvider } from 'kysely';
import { ImmediateSqliteDialect, withStatementCache } from './immediate-sqlite-dialect';
import { MIGRATIONS } from './migrations';
import type { Database } from './schema';

export type LeadsDb = Kysely<Database>;

/** Opens the SQLite file in WAL mode with a busy timeout and foreign keys on. */
export function openDatabase(path: string): { db: LeadsDb; sqlite: BetterSqlite3.Database } {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const sqlite = new BetterSqlite3(path);
  sqlite.pragma('journal_mode = WAL');
  // FULL: an acknowledged lead survives a power cut, not only a process crash ("never loses one").
  sqlite.pragma('synchronous = FULL');
  sqlite.pragma('busy_timeout = 5000');
  sqlite.pragma('foreign_keys = ON');
  // Erased personal data is overwritten, not left in free pages (retention, /stickers_forget).
  sqlite.pragma('secure_delete = ON');
  const db = new Kysely<Database>({
    dialect: new ImmediateSqliteDialect({ database: withStatementCache(sqlite) }),
  });
  return { db, sqlite };
}

const provider: MigrationProvider = { getMigrations: async () => MIGRATIONS };

/** Runs pending migrations; throws with the failing migration's name. */
export async function migrateToLatest(db: LeadsDb): Promise<string[]> {
  const migrator = new Migrator({ db, provider });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName ?? 'unknown';
    throw new Error(`database migration ${failed} failed: ${error instanceof Error ? error.message : String(error)}`);
  }
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/**
 * Moves every WAL frame into the main file and truncates the WAL, so that erased values do not survive in old
 * page images (after anonymisation).
 */
export function checkpointTruncate(sqlite: BetterSqlite3.Database): void {
  sqlite.pragma('wal_checkpoint(TRUNCATE)');
}

/** True when every known migration has been applied (for readiness). */
export async function migrationsCurrent(db: LeadsDb): Promise<boolean> {
  const migrations = await new Migrator({ db, provider }).getMigrations();
  return migrations.every((m) => m.executedAt !== undefined);
}
