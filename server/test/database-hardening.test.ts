/**
 * The database connection under ops conditions: another connection holding the write lock (a backup tool), an
 * online backup of the live file, a DATABASE_PATH (or DATABASE_URL) that cannot be opened, and the listen address (HOST).
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { INestApplication } from '@nestjs/common';
import Database from 'better-sqlite3';
import { Client } from 'pg';
import { startFromEnv } from '../src/app';
import { ConfigError } from '../src/config/config';
import { backupDatabase } from '../src/database/backup';
import { WriteHealth } from '../src/database/write-health';
import { CapturingLogger, SALT, SECRET, lead, postLead, startServer, tempDir, waitFor, type TestServer } from './harness';
import { describePostgresOnly, describeSqliteOnly, itSqliteOnly, onPostgres, postgresDatabaseFor, sqlRow } from './support/test-database';

let tmp: ReturnType<typeof tempDir>;
let server: TestServer | undefined;
let other: Database.Database | undefined;
let otherPg: Client | undefined;
let started: INestApplication | undefined;
beforeEach(() => {
  tmp = tempDir();
});
afterEach(async () => {
  if (other?.inTransaction) other.prepare('rollback').run();
  other?.close();
  other = undefined;
  await otherPg?.query('rollback').catch(() => undefined);
  await otherPg?.end();
  otherPg = undefined;
  await server?.close();
  server = undefined;
  await started?.close();
  started = undefined;
  tmp.remove();
});

const dbPath = () => join(tmp.dir, 'leads.sqlite');

/** A second connection on the same file, as a backup tool or a maintenance shell would open it. */
function holdExclusiveLock(path: string): Database.Database {
  other = new Database(path);
  other.prepare('begin exclusive').run();
  return other;
}

describeSqliteOnly('a lock held by another connection (SQLite only: the file lock of another SQLite connection)', () => {
  it('keeps the event loop free: /health answers while the lock is held; a lead sent meanwhile is stored after the release', async () => {
    server = await startServer({ dbPath: dbPath(), env: { DATABASE_BUSY_TIMEOUT_MS: '600000' } });
    const lock = holdExclusiveLock(dbPath());
    const body = lead();
    const pending = postLead(server, body);
    await waitFor(() => server!.db.busy.waits > 0, 10_000, 'the submit to wait for the lock');

    const health = await fetch(`${server.url}/health`);
    expect(health.status).toBe(200);
    // The lock is still held: /health answered before the release, not after it.
    expect(lock.inTransaction).toBe(true);

    lock.prepare('commit').run();
    const res = await pending;
    expect(res).toMatchObject({ status: 201, body: { duplicate: false } });
    expect(await sqlRow(server.db, 'select count(*) as n from leads where request_id = ?', body.request_id)).toEqual({ n: 1 });
    expect(server.app.get(WriteHealth).failing('submit')).toBeNull();
  });

  it('answers 503 unavailable when the lock outlasts DATABASE_BUSY_TIMEOUT_MS, records the failure, recovers after release', async () => {
    server = await startServer({ dbPath: dbPath(), env: { DATABASE_BUSY_TIMEOUT_MS: '50' } });
    const lock = holdExclusiveLock(dbPath());
    const body = lead();
    const res = await postLead(server, body);
    expect(lock.inTransaction).toBe(true);
    expect(res.status).toBe(503);
    expect(res.body).toEqual({ error: 'unavailable' });
    expect(server.db.busy.waits).toBeGreaterThan(0);
    expect(server.app.get(WriteHealth).failing('submit')).toMatchObject({ site: 'submit', code: 'SQLITE_BUSY' });
    const refusal = (l: string) => l.startsWith('error ') && l.includes('submit refused with 503') && l.includes('"count":1');
    expect(server.logger.lines.some(refusal)).toBe(true);

    lock.prepare('commit').run();
    expect((await postLead(server, body)).status).toBe(201);
    expect(server.app.get(WriteHealth).failing('submit')).toBeNull();
  });

  it('Kysely queries wait for the lock too, asynchronously, instead of failing at once', async () => {
    server = await startServer({ dbPath: dbPath(), env: { DATABASE_BUSY_TIMEOUT_MS: '600000' } });
    const lock = holdExclusiveLock(dbPath());
    const write = server.db.db.insertInto('settings').values({ key: 'probe', value: 'x', updated_at: 1 }).execute();
    await waitFor(() => server!.db.busy.waits > 0, 10_000, 'the write to wait for the lock');
    expect((await fetch(`${server.url}/health`)).status).toBe(200);
    lock.prepare('commit').run();
    await write;
    expect(await sqlRow(server.db, "select value from settings where key = 'probe'")).toEqual({ value: 'x' });
  });
});

/** A second PostgreSQL session on the server's database that takes `table`'s strongest lock and keeps it. */
async function holdTableLock(url: string, table: string): Promise<Client> {
  otherPg = new Client({ connectionString: url });
  await otherPg.connect();
  await otherPg.query('begin');
  await otherPg.query(`lock table ${table} in access exclusive mode`);
  return otherPg;
}

/** Waits until some session of the server's database waits for a lock (pg_locks: a lock not granted). */
async function someoneWaitsForALock(test: TestServer): Promise<void> {
  const deadline = Date.now() + 10_000;
  const waiting =
    'select count(*) as n from pg_locks l join pg_database d on d.oid = l.database where not l.granted and d.datname = current_database()';
  while ((await sqlRow<{ n: number }>(test.db, waiting))!.n === 0) {
    if (Date.now() > deadline) throw new Error('timed out waiting for a session to wait for a lock');
    await new Promise((r) => setTimeout(r, 10));
  }
}

describePostgresOnly('a lock held by another PostgreSQL session', () => {
  it('keeps the event loop free: /health answers while the lock is held; a lead sent meanwhile is stored after the release', async () => {
    server = await startServer({ dbPath: dbPath(), env: { DATABASE_BUSY_TIMEOUT_MS: '600000' } });
    const lock = await holdTableLock(server.config.databaseUrl!, 'leads');
    const body = lead();
    const pending = postLead(server, body);
    await someoneWaitsForALock(server);

    const health = await fetch(`${server.url}/health`);
    expect(health.status).toBe(200);

    await lock.query('commit');
    const res = await pending;
    expect(res).toMatchObject({ status: 201, body: { duplicate: false } });
    expect(await sqlRow(server.db, 'select count(*) as n from leads where request_id = ?', body.request_id)).toEqual({ n: 1 });
    expect(server.app.get(WriteHealth).failing('submit')).toBeNull();
  });

  it('answers 503 unavailable when the lock outlasts DATABASE_BUSY_TIMEOUT_MS (lock_timeout, 55P03), records the failure, recovers after release', async () => {
    server = await startServer({ dbPath: dbPath(), env: { DATABASE_BUSY_TIMEOUT_MS: '50' } });
    const lock = await holdTableLock(server.config.databaseUrl!, 'leads');
    const body = lead();
    const res = await postLead(server, body);
    expect(res.status).toBe(503);
    expect(res.body).toEqual({ error: 'unavailable' });
    expect(server.app.get(WriteHealth).failing('submit')).toMatchObject({ site: 'submit', code: '55P03' });
    const refusal = (l: string) => l.startsWith('error ') && l.includes('submit refused with 503') && l.includes('"count":1');
    expect(server.logger.lines.some(refusal)).toBe(true);

    await lock.query('commit');
    expect((await postLead(server, body)).status).toBe(201);
    expect(server.app.get(WriteHealth).failing('submit')).toBeNull();
  });

  it('Kysely queries wait for the lock too instead of failing at once', async () => {
    server = await startServer({ dbPath: dbPath(), env: { DATABASE_BUSY_TIMEOUT_MS: '600000' } });
    const lock = await holdTableLock(server.config.databaseUrl!, 'settings');
    const write = server.db.db.insertInto('settings').values({ key: 'probe', value: 'x', updated_at: 1 }).execute();
    await someoneWaitsForALock(server);
    expect((await fetch(`${server.url}/health`)).status).toBe(200);
    await lock.query('commit');
    await write;
    expect(await sqlRow(server.db, "select value from settings where key = 'probe'")).toEqual({ value: 'x' });
  });
});

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
    expect(existsSync(`${target}.partial`)).toBe(false);
    const copy = new Database(target, { readonly: true, fileMustExist: true });
    try {
      expect(copy.pragma('integrity_check', { simple: true })).toBe('ok');
      const ids = new Set(copy.prepare('select request_id from leads').pluck().all());
      expect(ids.size).toBe(result.leads);
      for (const body of before) expect(ids.has(body.request_id)).toBe(true);
    } finally {
      copy.close();
    }
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
  });
});

describe('starting (the function main uses)', () => {
  const env = (extra: Record<string, string>) => ({ PORT: '0', LEADS_SECRET: SECRET, LEADS_IP_SALT: SALT, LOG_LEVEL: 'warn', ...extra });
  const logger = () => new CapturingLogger();

  async function startProblems(extra: Record<string, string>): Promise<string[]> {
    try {
      started = (await startFromEnv(env(extra), { logger })).app;
    } catch (err) {
      if (err instanceof ConfigError) return err.problems;
      throw err;
    }
    return [];
  }

  itSqliteOnly(
    'an unusable DATABASE_PATH is one config line naming the variable, the path and the reason (SQLite only: the file)',
    async () => {
      const file = join(tmp.dir, 'plain-file');
      writeFileSync(file, 'not a directory');
      const under = join(file, 'leads.sqlite');
      expect(await startProblems({ DATABASE_PATH: under })).toEqual([
        `DATABASE_PATH=${under}: cannot open: EEXIST: file already exists, mkdir '${file}'`,
      ]);

      const notDb = join(tmp.dir, 'notes.txt');
      writeFileSync(notDb, 'this is not a database, just some text that is long enough to fill a header page. '.repeat(20));
      expect(await startProblems({ DATABASE_PATH: notDb })).toEqual([
        `DATABASE_PATH=${notDb}: cannot open: file is not a database (SQLITE_NOTADB)`,
      ]);
    },
  );

  (onPostgres ? it : it.skip)(
    'an unusable DATABASE_URL is one config line naming the variable, the URL without its password and the reason (PostgreSQL only)',
    async () => {
      const url = new URL(await postgresDatabaseFor(dbPath()));
      url.password = 'secret-pw';
      url.pathname = '/no_such_database';
      const [problem, ...more] = await startProblems({ DATABASE_URL: url.toString() });
      expect(more).toEqual([]);
      url.password = '';
      expect(problem).toBe(`DATABASE_URL=${url.toString().replace(/:@/, '@')}: cannot connect: database "no_such_database" does not exist`);
      expect(problem).not.toContain('secret-pw');
    },
  );

  it('HOST=127.0.0.1 binds loopback only; without HOST every interface, as before', async () => {
    // On PostgreSQL the app runs on the database that stands for the file, as startServer's do.
    const database: Record<string, string> = onPostgres ? { DATABASE_URL: await postgresDatabaseFor(dbPath()) } : {};
    const loopback = await startFromEnv(env({ DATABASE_PATH: dbPath(), HOST: '127.0.0.1', ...database }), { logger });
    started = loopback.app;
    expect(loopback.address.address).toBe('127.0.0.1');
    expect((await fetch(`http://127.0.0.1:${loopback.address.port}/health`)).status).toBe(200);
    await started.close();

    const every = await startFromEnv(env({ DATABASE_PATH: dbPath(), ...database }), { logger });
    started = every.app;
    expect(['::', '0.0.0.0']).toContain(every.address.address);
  });
});
