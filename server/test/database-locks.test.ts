/**
 * The database's locks under a running server: another connection (a backup tool, a maintenance shell) or another
 * PostgreSQL session holding a lock the app's writes need. Requests other than the waiting write are served meanwhile;
 * a lock that outlasts DATABASE_BUSY_TIMEOUT_MS makes POST /leads answer 503 (and every other route that needs the
 * database: the status changes of the API and the inbox), and the app serves again once it is released.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Client } from 'pg';
import request from 'supertest';
import { SECRET_HEADER } from '@stickers/shared';
import { TelegramSandbox } from '@stickers/telegram-sandbox';
import { WriteHealth } from '../src/database/write-health';
import { lead, postLead, SECRET, startServer, submitLead, tempDir, waitFor, type TestServer } from './harness';
import { inboxCall } from './support/inbox-client';
import { describePostgresOnly, describeSqliteOnly, sqlRow } from './support/test-database';

let tmp: ReturnType<typeof tempDir>;
let server: TestServer | undefined;
let other: Database.Database | undefined;
let otherPg: Client | undefined;
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
  tmp.remove();
});

const dbPath = () => join(tmp.dir, 'leads.sqlite');

const sandbox = new TelegramSandbox();
beforeAll(() => sandbox.start());
afterAll(() => sandbox.stop());

/**
 * With `lock` held past DATABASE_BUSY_TIMEOUT_MS (50 ms), a status change through the API and through the inbox are
 * 503 `unavailable` as the submit is, not Nest's 500; once `release`d, the change goes through.
 */
async function statusChangesRefusedWhileLocked(lock: () => Promise<unknown>, release: () => Promise<unknown>): Promise<void> {
  server = await startServer({ dbPath: dbPath(), sandbox, env: { DATABASE_BUSY_TIMEOUT_MS: '50' } });
  const n = await submitLead(server);
  const crm = () =>
    request(server!.app.getHttpServer())
      .post(`/leads/${n}/status`)
      .set(SECRET_HEADER, SECRET)
      .send({ from: 'new', to: 'in_progress', by: 'CRM' });
  const inbox = (status: string, expected: string) =>
    inboxCall(server!, sandbox, `leads/${n}/status`, { method: 'POST', body: { status, expected } });
  await lock();
  const [api, app] = [await crm(), await inbox('in_progress', 'new')];
  expect([api.status, api.body, app.status, app.body]).toEqual([503, { error: 'unavailable' }, 503, { error: 'unavailable' }]);
  await release();
  expect([(await crm()).status, (await inbox('won', 'in_progress')).status]).toEqual([200, 200]);
}

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

  it('a status change, through the API or the inbox, answers 503 unavailable too while the lock outlasts the wait', async () => {
    await statusChangesRefusedWhileLocked(
      () => Promise.resolve(holdExclusiveLock(dbPath())),
      () => Promise.resolve(other!.prepare('commit').run()),
    );
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

  it('a status change, through the API or the inbox, answers 503 unavailable too while the lock outlasts the wait', async () => {
    await statusChangesRefusedWhileLocked(
      () => holdTableLock(server!.config.databaseUrl!, 'leads'),
      () => otherPg!.query('commit'),
    );
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
