/** Races, restarts and privacy of `POST /leads` on a real SQLite file. */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FakeClock, lead, postLead, startServer, tempDir, type TestServer } from './harness';
import { describePostgresOnly, itSqliteOnly, sqlRow, sqlRows } from './support/test-database';

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
const count = async (sql: string) => sqlRow(server!.db, sql);

describe('races', () => {
  it('50 parallel posts with one request_id: one 201 and 49 × 200 with the same lead number', async () => {
    server = await startServer({ dbPath: dbPath() });
    const body = lead();
    const answers = await Promise.all(Array.from({ length: 50 }, () => postLead(server!, body)));
    const created = answers.filter((a) => a.status === 201);
    const dupes = answers.filter((a) => a.status === 200);
    expect(created).toHaveLength(1);
    expect(dupes).toHaveLength(49);
    const number = created[0].body.lead_number;
    for (const d of dupes) expect(d.body).toEqual({ lead_number: number, duplicate: true, repeat: false, telegram_link: null });
    expect(await count('select count(*) as n from leads')).toEqual({ n: 1 });
  });

  it('20 parallel posts, distinct request_ids, one phone: one 201 and 19 repeats of that number', async () => {
    server = await startServer({ dbPath: dbPath() });
    const phone = '+79990001122';
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => postLead(server!, lead({ phone, client_ip: `192.0.2.${i + 1}` }))),
    );
    const created = answers.filter((a) => a.status === 201);
    expect(created).toHaveLength(1);
    const repeats = answers.filter((a) => a.status === 200);
    expect(repeats).toHaveLength(19);
    for (const r of repeats)
      expect(r.body).toEqual({ lead_number: created[0].body.lead_number, duplicate: true, repeat: true, telegram_link: null });
    expect(await count('select count(*) as n from lead_repeats')).toEqual({ n: 19 });
  });

  it('parallel posts from one visitor cannot pass the visitor limit together', async () => {
    server = await startServer({ dbPath: dbPath(), env: { LEADS_IP_LIMIT: '5' } });
    const answers = await Promise.all(Array.from({ length: 30 }, () => postLead(server!, lead({ client_ip: '192.0.2.200' }))));
    expect(answers.filter((a) => a.status === 201)).toHaveLength(5);
    expect(answers.filter((a) => a.status === 429)).toHaveLength(25);
  });
});

describe('restart', () => {
  it('leads and limit windows persist across a restart on the same file', async () => {
    const clock = new FakeClock();
    const env = { LEADS_IP_LIMIT: '2' };
    server = await startServer({ dbPath: dbPath(), clock, env });
    const first = lead({ client_ip: '192.0.2.10' });
    const created = await postLead(server, first);
    await postLead(server, lead({ client_ip: '192.0.2.10' }));
    await server.close();

    server = await startServer({ dbPath: dbPath(), clock, env });
    expect(await postLead(server, first)).toMatchObject({ status: 200, body: { lead_number: created.body.lead_number, duplicate: true } });
    expect(await postLead(server, lead({ client_ip: '192.0.2.10' }))).toMatchObject({ status: 429, body: { why: 'visitor' } });
    expect(await postLead(server, lead({ phone: first.phone, client_ip: '192.0.2.11' }))).toMatchObject({
      status: 200,
      body: { repeat: true },
    });
    expect(await count('select count(*) as n from leads')).toEqual({ n: 2 });
  });
});

describe('privacy', () => {
  itSqliteOnly(
    'the raw client_ip appears in no database file (WAL included) and in no log line (SQLite only: the file and its WAL)',
    async () => {
      server = await startServer({ dbPath: dbPath(), env: { LEADS_IP_LIMIT: '3', LEADS_HOURLY_LIMIT: '6' } });
      const ips = ['203.0.113.77', '2001:db8::7777'];
      for (const ip of ips) {
        for (let i = 0; i < 4; i += 1) await postLead(server, lead({ client_ip: ip }));
      }
      // Also the rejected ones: a bad field next to a good ip, and a wrong secret.
      await postLead(server, lead({ client_ip: ips[0], phone: 'bad' }));
      await postLead(server, lead({ client_ip: ips[0] }), { 'X-Stickers-Leads-Secret': 'wrong' });
      const files = readdirSync(tmp.dir).filter((f) => f.startsWith('leads.sqlite'));
      expect(files).toEqual(expect.arrayContaining(['leads.sqlite', 'leads.sqlite-wal']));
      for (const file of files) {
        const bytes = readFileSync(join(tmp.dir, file));
        for (const ip of ips) {
          expect(bytes.includes(Buffer.from(ip))).toBe(false);
          expect(bytes.includes(Buffer.from(ip, 'utf16le'))).toBe(false);
        }
      }
      expect(server.logger.lines.length).toBeGreaterThan(0);
      for (const line of server.logger.lines) for (const ip of ips) expect(line).not.toContain(ip);
    },
  );
});

describePostgresOnly('privacy on PostgreSQL', () => {
  it('the raw client_ip appears in no row of any table and in no log line', async () => {
    server = await startServer({ dbPath: dbPath(), env: { LEADS_IP_LIMIT: '3', LEADS_HOURLY_LIMIT: '6' } });
    const ips = ['203.0.113.77', '2001:db8::7777'];
    for (const ip of ips) {
      for (let i = 0; i < 4; i += 1) await postLead(server, lead({ client_ip: ip }));
    }
    // Also the rejected ones: a bad field next to a good ip, and a wrong secret.
    await postLead(server, lead({ client_ip: ips[0], phone: 'bad' }));
    await postLead(server, lead({ client_ip: ips[0] }), { 'X-Stickers-Leads-Secret': 'wrong' });
    const tables = await sqlRows<{ table_name: string }>(
      server.db,
      "select table_name from information_schema.tables where table_schema = current_schema() and table_type = 'BASE TABLE' order by table_name",
    );
    expect(tables.map((t) => t.table_name)).toEqual(expect.arrayContaining(['leads', 'lead_repeats', 'rate_events']));
    let rows = 0;
    for (const { table_name } of tables) {
      for (const row of await sqlRows<{ r: string }>(server.db, `select t::text as r from "${table_name}" t`)) {
        rows += 1;
        for (const ip of ips) expect(row.r).not.toContain(ip);
      }
    }
    expect(rows).toBeGreaterThan(0);
    expect(server.logger.lines.length).toBeGreaterThan(0);
    for (const line of server.logger.lines) for (const ip of ips) expect(line).not.toContain(ip);
  });
});
