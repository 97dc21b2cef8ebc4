import { accessSync, constants, existsSync } from 'node:fs';
import { dirname } from 'node:path';
import type { ServerConfig } from '../config/config';
import { databasePathProblem, databaseUrlProblem, describeDatabaseUrl } from '../database/database';
import { openHandle } from '../database/database.module';
import { DatabaseMaintenanceRepository } from '../repositories/database-maintenance.repository';
import { SettingsRepository } from '../repositories/settings.repository';

export type CheckStatus = 'ok' | 'warn' | 'fail';

/** One line of the doctor's report: ok, a warning (nothing to fix now), or a problem naming the variable to fix. */
export interface CheckLine {
  status: CheckStatus;
  text: string;
}

const messageOf = (err: unknown) => (err instanceof Error ? err.message : String(err));

/**
 * The doctor's line on the configured database, opened as the server would without migrating it (the SQLite file at
 * DATABASE_PATH, or PostgreSQL at DATABASE_URL); writes only readiness's probe row.
 */
export async function checkDatabase(config: ServerConfig, now: number): Promise<CheckLine> {
  const { databaseUrl, databasePath } = config;
  const variable = databaseUrl ? 'DATABASE_URL' : 'DATABASE_PATH';
  const where = databaseUrl ? `PostgreSQL ${describeDatabaseUrl(databaseUrl)}` : `SQLite ${databasePath}`;
  const sqliteFile = !databaseUrl && databasePath !== ':memory:';
  const fail = (text: string): CheckLine => ({ status: 'fail', text });
  try {
    if (sqliteFile && !existsSync(databasePath)) {
      // No file yet: the server creates it at its first start, if it may write the nearest folder that exists.
      let folder = dirname(databasePath);
      while (!existsSync(folder) && dirname(folder) !== folder) folder = dirname(folder);
      try {
        accessSync(folder, constants.W_OK);
        return { status: 'warn', text: `database: ${where} does not exist yet: the server creates and migrates it at its first start` };
      } catch {
        return fail(`${variable}=${databasePath}: the file does not exist and its folder ${folder} cannot be written`);
      }
    }
    const problem = databaseUrl ? await databaseUrlProblem(databaseUrl) : sqliteFile ? databasePathProblem(databasePath) : null;
    if (problem) return fail(problem);
    const handle = openHandle({ ...config, databasePoolMax: 1 });
    try {
      if (!(await new DatabaseMaintenanceRepository(handle).migrationsCurrent()))
        return fail(
          `database: ${where} is not migrated to this version: start this version of the server once (it migrates at start), or check ${variable}`,
        );
      const refused = await new SettingsRepository(handle.db).probeWrite(now).then(() => null, messageOf);
      return refused
        ? fail(`database: ${where} refuses a write (${refused}): check ${variable}, the disk and its permissions`)
        : { status: 'ok', text: `database: ${where} reachable, migrated, takes writes` };
    } finally {
      await handle.db.destroy();
    }
  } catch (err) {
    return fail(`database: ${messageOf(err)}`);
  }
}
