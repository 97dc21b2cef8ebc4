import { closeSync, existsSync, openSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';

/** A backup refused before it began: a usage error (exit 2). */
export class BackupRefused extends Error {}

/** The backup API copies in steps; this many pages per step is "all of them", so one step is one snapshot. */
const ALL_PAGES = 0x7fffffff;

/**
 * `npm run leads -- backup <file>`: a snapshot through SQLite's online backup API, safe while the server runs, written
 * as `<file>.partial`, checked, then renamed, so a file at `<file>` is always complete. Never overwrites. The copy holds
 * every lead's personal data: only its owner may read it (0600), whatever the umask.
 */
export async function backupDatabase(source: string, target: string): Promise<{ target: string; bytes: number; leads: number }> {
  if (!existsSync(source)) throw new BackupRefused(`no database at ${source} (set DATABASE_PATH)`);
  if (existsSync(target)) throw new BackupRefused(`${target} already exists: choose a new file name (a backup never overwrites)`);
  if (resolve(source) === resolve(target)) throw new BackupRefused('the backup file must not be the database itself');
  const folder = dirname(resolve(target));
  if (!existsSync(folder)) throw new BackupRefused(`no folder ${folder} for the backup: create it first`);
  const partial = `${target}.partial`;
  // A run that died midway may have left its files: a stale -wal beside the new copy would be read into it.
  for (const leftover of ['', '-wal', '-shm', '-journal']) rmSync(`${partial}${leftover}`, { force: true });
  // Made empty, 0600, before SQLite writes into it (its journal takes the file's mode); a folder this user may not
  // write to fails here, naming the file (EACCES), not inside SQLite as "unable to open database file".
  closeSync(openSync(partial, 'wx', 0o600));
  // This process may wait for locks as long as it likes: it is not serving requests.
  const db = new BetterSqlite3(source, { fileMustExist: true, timeout: 10_000 });
  try {
    await db.backup(partial, { progress: () => ALL_PAGES });
  } finally {
    db.close();
  }
  try {
    // The copy is one file: a rollback journal instead of the source's WAL, so that whoever opens it (this check, a
    // read-only trace, sqlite3) leaves no -wal and -shm beside it; the server turns WAL on again when it opens it.
    const copy = new BetterSqlite3(partial, { fileMustExist: true });
    let leads: number;
    try {
      copy.pragma('journal_mode = DELETE');
      const check = copy.pragma('integrity_check', { simple: true });
      if (check !== 'ok') throw new Error(`the copy failed its integrity check: ${String(check)}`);
      leads = (copy.prepare('select count(*) as n from leads').get() as { n: number }).n;
    } finally {
      copy.close();
    }
    renameSync(partial, target);
    return { target, bytes: statSync(target).size, leads };
  } catch (err) {
    rmSync(partial, { force: true });
    throw err;
  }
}
