/**
 * The SQLite database file under a running server: deleted or replaced by another file, `POST /leads` answers 503
 * and stores nothing, while /health stays up and readiness learns the submit failed.
 */
import { copyFileSync, renameSync, rmSync } from 'node:fs';
import { WriteHealth } from '../src/database/write-health';
import { counterValue, lead, postLead, sandboxSuite, type BootOptions, type TestServer } from './harness';
import { describeSqliteOnly, sqlRow } from './support/test-database';

const suite = sandboxSuite();
let server: TestServer;
/** The app on a fresh database file, with no rate limit a test reaches. */
const boot = async (options: BootOptions = {}) => (server = await suite.boot(options));

const count = async (sql: string, ...params: unknown[]) => (await sqlRow<{ n: number }>(server.db, sql, ...params))!.n;

describeSqliteOnly('the database file under a running server (SQLite only: the file at DATABASE_PATH)', () => {
  it('deleted: POST /leads answers 503 unavailable and stores nothing; /health stays 200; readiness learns the submit failed', async () => {
    await boot({ sandbox: undefined });
    expect((await postLead(server, lead())).status).toBe(201);
    rmSync(server.config.databasePath);

    const refused = lead();
    const res = await postLead(server, refused);
    expect(res).toMatchObject({ status: 503, body: { error: 'unavailable' } });
    expect(res.body).toEqual({ error: 'unavailable' });
    expect(await count('select count(*) as n from leads where request_id = ?', refused.request_id)).toBe(0);
    expect(await count('select count(*) as n from leads')).toBe(1);
    expect((await fetch(`${server.url}/health`)).status).toBe(200);
    expect(server.app.get(WriteHealth).failing('submit')).toMatchObject({ site: 'submit', code: 'DATABASE_FILE_GONE' });
    expect(await counterValue(server, 'leads_submissions_total', { result: 'unavailable' })).toBe(1);
    // Retries of a lead acknowledged before are refused too: no answer may come from a file nobody will open again.
    expect((await postLead(server, refused)).status).toBe(503);
  });

  it('replaced by another file (moved over it): POST /leads answers 503 and the new file gets nothing', async () => {
    await boot({ sandbox: undefined });
    expect((await postLead(server, lead())).status).toBe(201);
    const path = server.config.databasePath;
    copyFileSync(path, `${path}.copy`);
    renameSync(`${path}.copy`, path);
    const refused = lead();
    expect(await postLead(server, refused)).toMatchObject({ status: 503, body: { error: 'unavailable' } });
    expect(await count('select count(*) as n from leads where request_id = ?', refused.request_id)).toBe(0);
    expect((await fetch(`${server.url}/health`)).status).toBe(200);
  });
});
