/**
 * Erasure that erases (docs/decisions.md, "Erasure that erases"): every free
 * text a visitor typed is personal — the form's six fields, the UTM values, the referrer — so after `/stickers_forget`
 * none of it is in `GET /leads`, the CSV, the webhooks, the card, the trace or any database file. One list
 * (server/src/domain/personal-fields.ts) says so for all of them. And leads an older erasure left with their date and
 * guests lose them when migration 0013 runs.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { Migrator } from 'kysely';
import { LEAD_FIELDS, SECRET_HEADER } from '@stickers/shared';
import { migrateToLatest, openDatabase, openPostgres, type LeadsDb } from '../src/database/database';
import { MIGRATIONS } from '../src/database/migrations';
import { PERSONAL_FIELDS, PERSONAL_LEAD_COLUMNS, PERSONAL_SOURCE_COLUMNS } from '../src/domain/personal-fields';
import { TraceService } from '../src/trace/trace.service';
import { OutboxService } from '../src/outbox/outbox.service';
import {
  FakeClock,
  LEADS_CHAT,
  NO_RATE_LIMITS,
  SECRET,
  botLaunched,
  lead,
  memberActions,
  postLead,
  sandboxSuite,
  waitFor,
} from './harness';
import { onPostgres, postgresDatabaseFor, sqlRows } from './support/test-database';

const HOOK_SECRET = 'whsec_erasure_0123456789abcdef';
const { tmp, sandbox, start } = sandboxSuite();
const { command } = memberActions(sandbox);
let n = 0;

/** The victim's request: every free-text field holds something that names her. */
const victim = () =>
  lead({
    name: 'Анна Иванова',
    telegram: '@victim_one',
    phone: '+79994510123',
    date: 'Иванова Анна, ул. Ленина 5',
    guests: 'паспорт 4510 123456',
    comment: 'позвоните маме Ивановой',
    source: {
      landing: 'wedding',
      utm_source: 'mailing-ivanova',
      utm_medium: 'email',
      utm_campaign: 'anna-ivanova-birthday',
      utm_content: 'ivanova.anna@example.com',
      utm_term: 'анна иванова ленина',
      referrer: 'ivanova-anna.example',
    },
  });
/** A repeat of hers (same username within 24 h) with other free text, from another address, with its own source. */
const repeat = () =>
  lead({
    name: 'Анна Иванова',
    telegram: '@Victim_One',
    phone: '+79994510999',
    date: 'Ленина 5, кв. 12',
    guests: 'паспорт 4510 654321',
    client_ip: '198.51.100.77',
    source: {
      landing: 'wedding',
      utm_source: 'ivanova-repeat-source',
      utm_medium: 'ivanova-repeat-medium',
      utm_campaign: 'ivanova-repeat-campaign',
      utm_content: 'ivanova.repeat@example.com',
      utm_term: 'ivanova repeat term',
      referrer: 'ivanova-repeat.example',
    },
  });
/** The repeat's columns that erasure must empty besides its changes: its address hash, UTM values and referrer. */
const REPEAT_PERSONAL = 'ip_hash, utm_source, utm_medium, utm_campaign, utm_content, utm_term, source_referrer';
const VALUES = [
  'Иванова',
  'Ленина',
  // Not the bare '4510': four digits turn up by chance in a time in milliseconds or a hex hash.
  'паспорт 4510',
  'victim_one',
  'Victim_One',
  '79994510',
  'mailing-ivanova',
  'anna-ivanova',
  'ivanova.anna@example.com',
  'анна иванова',
  'ivanova-anna.example',
  'ivanova-repeat',
  'ivanova.repeat@example.com',
  'ivanova repeat term',
];

/** The values are in no row of any table (both databases), and on SQLite in no byte of any file in `dir`. */
async function expectNowhere(db: Parameters<typeof sqlRows>[0], dir: string): Promise<void> {
  const tables = onPostgres
    ? await sqlRows<{ name: string }>(
        db,
        "select table_name as name from information_schema.tables where table_schema = current_schema() and table_type = 'BASE TABLE'",
      )
    : await sqlRows<{ name: string }>(db, "select name from sqlite_master where type = 'table'");
  expect(tables.map((t) => t.name)).toEqual(expect.arrayContaining(['leads', 'lead_repeats', 'lead_events', 'erased_contacts']));
  for (const { name } of tables) {
    const text = JSON.stringify(await sqlRows(db, `select * from ${name}`));
    for (const v of VALUES) expect({ table: name, value: v, found: text.includes(v) }).toEqual({ table: name, value: v, found: false });
  }
  if (onPostgres) return;
  for (const file of readdirSync(dir)) {
    const bytes = readFileSync(join(dir, file));
    for (const v of VALUES) expect({ file, value: v, found: bytes.includes(Buffer.from(v)) }).toEqual({ file, value: v, found: false });
  }
}

/** A webhook endpoint that keeps every body it is sent. */
function receiver(): { url: () => string; bodies: any[]; start(): Promise<void>; stop(): Promise<void> } {
  const bodies: any[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      bodies.push(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      res.writeHead(200).end();
    });
  });
  return {
    bodies,
    url: () => `http://127.0.0.1:${(server.address() as { port: number }).port}/hooks`,
    start: () => new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve)),
    stop: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe('the list of personal fields', () => {
  it('holds every field of the form (date and guests are free text too), the UTM values and the referrer; not the landing', () => {
    expect([...PERSONAL_FIELDS].sort()).toEqual([...LEAD_FIELDS].sort());
    expect(PERSONAL_SOURCE_COLUMNS).toEqual(['utm_source', 'utm_medium', 'utm_campaign', 'utm_content', 'utm_term', 'source_referrer']);
    expect(PERSONAL_LEAD_COLUMNS).toEqual(expect.arrayContaining(['telegram_key', 'ip_hash']));
    expect(PERSONAL_LEAD_COLUMNS).not.toContain('source_landing');
  });
});

describe('/stickers_forget erases every free-text field', () => {
  const hooks = receiver();
  beforeAll(() => hooks.start());
  afterAll(() => hooks.stop());

  it('GET /leads, the CSV, the webhooks, the card, the trace and the database files keep none of it', async () => {
    const dbPath = join(tmp.dir, `fields-${++n}`, 'leads.sqlite');
    const server = await start({
      dbPath,
      clock: new FakeClock(),
      polling: true,
      env: { ...NO_RATE_LIMITS, LEADS_WEBHOOK_URL: hooks.url(), LEADS_WEBHOOK_SECRET: HOOK_SECRET },
    });
    await botLaunched(sandbox);
    const webhooks = server.app.get(OutboxService);
    const first = await postLead(server, victim());
    expect(first.status).toBe(201);
    const id = first.body.lead_number as number;
    await server.outbox.whenIdle();
    server.clock.advance(60_000);
    expect((await postLead(server, repeat())).body).toMatchObject({ lead_number: id, repeat: true });
    await server.outbox.whenIdle();
    await webhooks.whenIdle();
    const repeatRow = () =>
      sqlRows<Record<string, string | null>>(
        server.db,
        `select ${REPEAT_PERSONAL}, source_landing from lead_repeats where lead_id = ?`,
        id,
      );
    const [before] = await repeatRow();
    // Stored: each personal column of the repeat holds a value (its own address's hash, not the lead's).
    for (const column of REPEAT_PERSONAL.split(', '))
      expect({ column, value: before[column] }).toEqual({ column, value: expect.any(String) });
    const [leadBefore] = await sqlRows<{ ip_hash: string }>(server.db, 'select ip_hash from leads where id = ?', id);
    expect(before.ip_hash).not.toBe(leadBefore.ip_hash);

    expect(await command(LEADS_CHAT, '/stickers_forget @victim_one')).toBe(
      `🗑 Обезличено заявок: 1 (#${id}): личные данные удалены, карточки обновлены.`,
    );
    await server.outbox.whenIdle();
    const [anonymised] = await waitFor(() => {
      const found = hooks.bodies.filter((b) => b.type === 'lead.anonymised');
      return found.length === 1 && found;
    });
    await webhooks.whenIdle();

    const page = await fetch(`${server.url}/leads`, { headers: { [SECRET_HEADER]: SECRET } });
    const listed = ((await page.json()) as { leads: Record<string, unknown>[] }).leads.find((l) => l.lead_number === id)!;
    expect(listed).toMatchObject({
      name: null,
      telegram: null,
      phone: null,
      date: null,
      guests: null,
      comment: null,
      source: {
        landing: 'wedding',
        utm_source: null,
        utm_medium: null,
        utm_campaign: null,
        utm_content: null,
        utm_term: null,
        referrer: null,
      },
      anonymised_at: new Date(server.clock.now()).toISOString(),
    });
    const csv = await (await fetch(`${server.url}/leads/export.csv`, { headers: { [SECRET_HEADER]: SECRET } })).text();
    expect(csv).toContain(`\r\n${id},`);
    const card = sandbox.messages(LEADS_CHAT).find((m) => m.text.startsWith(`🆕 Заявка #${id}\n`))!;
    expect(card.text).toContain('🗑 Личные данные удалены');
    expect(card.text).toContain('📣 wedding\n');
    expect(anonymised.data.lead).toEqual(listed);
    const story = JSON.stringify(await server.app.get(TraceService).read(String(id)));
    for (const [what, text] of [
      ['GET /leads', JSON.stringify(listed)],
      ['CSV', csv],
      ['webhook lead.anonymised', JSON.stringify(anonymised)],
      ['card', card.text],
      ['trace', story],
    ]) {
      for (const v of VALUES) expect({ what, value: v, found: text.includes(v) }).toEqual({ what, value: v, found: false });
    }
    // The repeat's address hash, UTM values and referrer are gone too; its landing stays, as the lead's does.
    const [after] = await repeatRow();
    expect(after).toEqual({ ...Object.fromEntries(REPEAT_PERSONAL.split(', ').map((c) => [c, null])), source_landing: 'wedding' });
    // The repeat still says which fields it changed, not to what.
    const [erasedRepeat] = await sqlRows<{ changes: string }>(server.db, 'select changes from lead_repeats where lead_id = ?', id);
    expect(JSON.parse(erasedRepeat.changes)).toEqual({ phone: null, date: null, guests: null, comment: null });
    await expectNowhere(server.db, join(dbPath, '..'));
  });
});

/** The database at `path` (or the PostgreSQL one standing for it), opened to migrate by hand. */
async function openBare(path: string): Promise<LeadsDb> {
  return onPostgres ? openPostgres(await postgresDatabaseFor(path)).db : openDatabase(path).db;
}

describe('migration 0013', () => {
  it('erases what an older erasure left: date, guests, UTM values, referrer, and every changed field of the repeats', async () => {
    const db = await openBare(join(tmp.dir, `migration-${++n}.sqlite`));
    try {
      const names = Object.keys(MIGRATIONS);
      const from = names.indexOf('2026-12-01-0013-erased-contacts');
      const { error } = await new Migrator({ db, provider: { getMigrations: () => Promise.resolve(MIGRATIONS) } }).migrateTo(
        names[from - 1],
      );
      expect(error).toBeUndefined();
      const base = { created_at: 1, received_at: 1, next_attempt_at: 1, source_landing: 'wedding', utm_term: 'анна иванова' };
      // Anonymised before: the old erasure kept date, guests and the source; a repeat kept its date and guests.
      const erased = {
        ...base,
        request_id: 'old-erased',
        date: 'Иванова Анна, ул. Ленина 5',
        guests: 'паспорт 4510 123456',
        anonymised_at: 2,
      };
      const kept = { ...base, request_id: 'not-erased', name: 'Живая Заявка', date: '1 мая', guests: '30' };
      const [{ id: oldId }] = await db.insertInto('leads').values(erased).returning('id').execute();
      const [{ id: liveId }] = await db.insertInto('leads').values(kept).returning('id').execute();
      const changes = JSON.stringify({ date: 'Ленина 5, кв. 12', guests: 'паспорт 4510 654321' });
      const repeatRow = {
        request_id: 'r',
        created_at: 1,
        next_attempt_at: 1,
        changes,
        ip_hash: 'f'.repeat(64),
        utm_source: 'mailing-ivanova',
      };
      await db
        .insertInto('lead_repeats')
        .values([
          { ...repeatRow, lead_id: oldId, request_id: 'old-repeat' },
          { ...repeatRow, lead_id: liveId, request_id: 'live-repeat' },
        ])
        .execute();

      expect(await migrateToLatest(db)).toEqual(names.slice(from));

      const leads = await db.selectFrom('leads').selectAll().orderBy('id').execute();
      expect(leads[0]).toMatchObject({ date: null, guests: null, utm_term: null, source_landing: 'wedding', anonymised_at: 2 });
      expect(leads[1]).toMatchObject({ name: 'Живая Заявка', date: '1 мая', guests: '30', utm_term: 'анна иванова', anonymised_at: null });
      const repeats = await db.selectFrom('lead_repeats').selectAll().orderBy('id').execute();
      expect(repeats[0]).toMatchObject({ changes: '{}', ip_hash: null, utm_source: null });
      expect(repeats[1]).toMatchObject({ changes, ip_hash: 'f'.repeat(64), utm_source: 'mailing-ivanova' });
      expect(await db.selectFrom('erased_contacts').selectAll().execute()).toEqual([]);
    } finally {
      await db.destroy();
    }
  });
});
