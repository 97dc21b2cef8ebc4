import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { AnonymisationService } from '../src/anonymisation/anonymisation.service';
import { lead, postLead, startServer, tempDir, waitFor, type TestServer } from './harness';

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

describe('anonymisation while a reader holds the WAL', () => {
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
