import { accessSync, constants, existsSync } from 'node:fs';
import { dirname } from 'node:path';
import type { ServerConfig } from '../config/config';
import { databasePathProblem, databaseUrlProblem, describeDatabaseUrl } from '../database/database';
import { openHandle } from '../database/database.module';
import { DatabaseMaintenanceRepository } from '../repositories/database-maintenance.repository';
import { SettingsRepository } from '../repositories/settings.repository';

/** What the doctor learns of the database the configuration names; the doctor service decides what is a problem. */
export type DatabaseFacts =
  /** SQLite: no file yet (the server creates and migrates it at its first start); can its folder be written? */
  | { kind: 'missing'; where: string; folder: string; folderWritable: boolean }
  /** It does not open (the reason names the variable, as the server's start says it). */
  | { kind: 'unusable'; where: string; problem: string }
  /** It opens: are its migrations applied, does it take a write (null: yes; else why not)? */
  | { kind: 'open'; where: string; migrated: boolean; writeError: string | null };

/** The nearest folder of `path` that exists. */
function existingFolder(path: string): string {
  let folder = dirname(path);
  while (!existsSync(folder) && dirname(folder) !== folder) folder = dirname(folder);
  return folder;
}

/**
 * Opens the database of the configuration as the server would, without migrating it (the doctor only looks): the
 * SQLite file at DATABASE_PATH, or PostgreSQL at DATABASE_URL. Writes only readiness's probe row.
 */
export class DatabaseProbe {
  constructor(private readonly config: ServerConfig) {}

  async facts(now: number): Promise<DatabaseFacts> {
    const { databaseUrl, databasePath } = this.config;
    const where = databaseUrl ? `PostgreSQL ${describeDatabaseUrl(databaseUrl)}` : `SQLite ${databasePath}`;
    if (databaseUrl) {
      const problem = await databaseUrlProblem(databaseUrl);
      if (problem) return { kind: 'unusable', where, problem };
    } else if (databasePath !== ':memory:') {
      if (!existsSync(databasePath)) {
        const folder = existingFolder(databasePath);
        let folderWritable = true;
        try {
          accessSync(folder, constants.W_OK);
        } catch {
          folderWritable = false;
        }
        return { kind: 'missing', where, folder, folderWritable };
      }
      const problem = databasePathProblem(databasePath);
      if (problem) return { kind: 'unusable', where, problem };
    }
    const handle = openHandle({ ...this.config, databasePoolMax: 1 });
    try {
      const migrated = await new DatabaseMaintenanceRepository(handle).migrationsCurrent();
      let writeError: string | null = null;
      if (migrated) {
        try {
          await new SettingsRepository(handle.db).probeWrite(now);
        } catch (err) {
          writeError = err instanceof Error ? err.message : String(err);
        }
      }
      return { kind: 'open', where, migrated, writeError };
    } finally {
      await handle.db.destroy();
    }
  }
}
