import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { AnonymisationService } from '../src/anonymisation/anonymisation.service';
import { Client } from 'pg';
import { lead, postLead, startServer, tempDir, waitFor, type TestServer } from './harness';
import { describePostgresOnly, describeSqliteOnly, sqlRows } from './support/test-database';

const tmp = tempDir();
let server: TestServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});
afterAll(() => tmp.remove());

function filesHolding(dir: string, value: string): string[] {
  return readdirSync(dir).filter((f) => existsSync(join(dir, f)) && readFileSync(join(dir, f)).includes(Buffer.from(value)));
}

describeSqliteOnly('anonymisation while a reader holds the WAL (SQLite only: the WAL and its checkpoint)', () => {
  it('the erased values leave every database file once the reader (an online backup) lets go', async () => {
    const dir = join(tmp.dir, 'reader');
    const dbPath = join(dir, 'leads.sqlite');
    server = await startServer({ dbPath });
    const name = 'Зинаида Стираемая';
    const res = await postLead(server, lead({ name }));
    expect(res.status).toBe(201);
    const id = res.body.lead_number as number;

    // A reader with an open snapshot, as a backup has: the truncating checkpoint cannot go through meanwhile.
    const reader = new BetterSqlite3(dbPath, { readonly: true });
    reader.exec('begin');
    reader.prepare('select count(*) from leads').get();
    try {
      expect(await server.app.get(AnonymisationService).forget(id)).toBe('done');
      expect(filesHolding(dir, name)).not.toEqual([]);
    } finally {
      reader.exec('commit');
      reader.close();
    }
    await waitFor(() => filesHolding(dir, name).length === 0, 5000, 'the name gone from every database file');
  });
});

describePostgresOnly('anonymisation while a reader holds a snapshot (PostgreSQL)', () => {
  it('a reader with an open snapshot (as pg_dump has) does not hold the erase off; no row holds the values for a new reader', async () => {
    server = await startServer({ dbPath: join(tmp.dir, 'pg-reader', 'leads.sqlite') });
    const name = 'Зинаида Стираемая';
    const res = await postLead(server, lead({ name }));
    expect(res.status).toBe(201);
    const id = res.body.lead_number as number;
    /** The tables with a row that holds `value`, for a new reader. */
    const rowsHolding = async (value: string) => {
      const tables = await sqlRows<{ table_name: string }>(
        server!.db,
        "select table_name from information_schema.tables where table_schema = current_schema() and table_type = 'BASE TABLE' order by table_name",
      );
      const found: string[] = [];
      for (const { table_name: table } of tables) {
        for (const { r } of await sqlRows<{ r: string }>(server!.db, `select t::text as r from "${table}" t`))
          if (r.includes(value)) found.push(table);
      }
      return found;
    };
    expect(await rowsHolding(name)).toEqual(['leads']);

    const reader = new Client({ connectionString: server.config.databaseUrl! });
    await reader.connect();
    try {
      await reader.query('begin isolation level repeatable read');
      await reader.query('select count(*) from leads');
      expect(await server.app.get(AnonymisationService).forget(id)).toBe('done');
      // The reader's snapshot still sees the values; nobody else does.
      expect((await reader.query('select name from leads where id = $1', [id])).rows).toEqual([{ name }]);
      expect(await rowsHolding(name)).toEqual([]);
    } finally {
      await reader.query('commit');
      await reader.end();
    }
  });
});
