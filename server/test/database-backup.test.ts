/**
 * The online backup (`npm run leads -- backup <file>`) of the live SQLite file: a copy taken while the server takes
 * leads opens, passes its check and holds every lead; an existing file is never overwritten. SQLite only: PostgreSQL
 * is backed up with its own tools.
 */
import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { backup } from '../src/cli/ops';
import { backupDatabase } from '../src/database/backup';
import { lead, postLead, startServer, tempDir, type TestServer } from './harness';
import { describeSqliteOnly } from './support/test-database';
import { captureConsole } from './support/console';

let tmp: ReturnType<typeof tempDir>;
let server: TestServer | undefined;
beforeEach(() => {
  tmp = tempDir();
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  tmp.remove();
});

const dbPath = () => join(tmp.dir, 'leads.sqlite');

describeSqliteOnly('online backup (npm run leads -- backup <file>) (SQLite only: a copy of the database file)', () => {
  it('copies the live database while the server takes leads: the copy opens, passes its check, holds every lead', async () => {
    server = await startServer({ dbPath: dbPath() });
    const before = Array.from({ length: 30 }, () => lead());
    for (const body of before) expect((await postLead(server, body)).status).toBe(201);
    const target = join(tmp.dir, 'backups', 'leads-backup.sqlite');
    mkdirSync(join(tmp.dir, 'backups'));

    const during = Promise.all(Array.from({ length: 10 }, () => postLead(server!, lead())));
    const result = await backupDatabase(dbPath(), target);
    expect((await during).every((a) => a.status === 201)).toBe(true);

    expect(result.target).toBe(target);
    expect(result.leads).toBeGreaterThanOrEqual(30);
    // Every lead's personal data: the owner's alone, whatever the umask (here the usual 022).
    expect(statSync(target).mode & 0o777).toBe(0o600);
    // One file: no `.partial-wal` and `.partial-shm` left beside it (each backup left both), nor any after a read-only open.
    expect(readdirSync(join(tmp.dir, 'backups'))).toEqual(['leads-backup.sqlite']);
    const copy = new Database(target, { readonly: true, fileMustExist: true });
    try {
      expect(copy.pragma('integrity_check', { simple: true })).toBe('ok');
      const ids = new Set(copy.prepare('select request_id from leads').pluck().all());
      expect(ids.size).toBe(result.leads);
      for (const body of before) expect(ids.has(body.request_id)).toBe(true);
    } finally {
      copy.close();
    }
    expect(readdirSync(join(tmp.dir, 'backups'))).toEqual(['leads-backup.sqlite']);
    // The server goes on as before.
    expect((await postLead(server, lead())).status).toBe(201);
  });

  it('never overwrites an existing file, and refuses a database that does not exist', async () => {
    server = await startServer({ dbPath: dbPath() });
    const target = join(tmp.dir, 'taken.sqlite');
    writeFileSync(target, 'keep me');
    await expect(backupDatabase(dbPath(), target)).rejects.toThrow('already exists');
    await expect(backupDatabase(join(tmp.dir, 'none.sqlite'), join(tmp.dir, 'b.sqlite'))).rejects.toThrow('no database at');
    expect(existsSync(join(tmp.dir, 'b.sqlite'))).toBe(false);
    const noFolder = join(tmp.dir, 'no-folder', 'b.sqlite');
    await expect(backupDatabase(dbPath(), noFolder)).rejects.toThrow(
      `no folder ${join(tmp.dir, 'no-folder')} for the backup: create it first`,
    );
    // `npm run leads -- backup`: either refusal is one line and exit 2.
    expect(await captureConsole(() => backup(dbPath(), target))).toEqual({
      result: 2,
      log: [],
      error: [`${target} already exists: choose a new file name (a backup never overwrites)`],
    });
  });
});
