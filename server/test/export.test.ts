/**
 * Export: `GET /leads` (JSON pages by an opaque cursor), `GET /leads/export.csv` and `/stickers_export`,
 * against the real app; the CSV is parsed here by a small RFC 4180 parser.
 */
import { join } from 'node:path';
import { SECRET_HEADER } from '@stickers/shared';
import { type SandboxUser } from '@stickers/telegram-sandbox';
import {
  ADMIN_CHAT,
  FakeClock,
  LEADS_CHAT,
  NO_RATE_LIMITS,
  SECRET,
  botLaunched,
  lead,
  memberActions,
  postLead,
  sandboxSuite,
  type TestServer,
} from './harness';
import { sqlRun } from './support/test-database';

const HOUR = 60 * 60 * 1000;
const { tmp, sandbox, start } = sandboxSuite();
const { command } = memberActions(sandbox);
let n = 0;

async function get(
  server: TestServer,
  path: string,
  secret = SECRET,
): Promise<{ status: number; body: any; raw: Buffer; headers: Headers }> {
  const res = await fetch(`${server.url}${path}`, { headers: { [SECRET_HEADER]: secret } });
  const raw = Buffer.from(await res.arrayBuffer());
  let body: unknown = null;
  try {
    body = JSON.parse(raw.toString('utf8'));
  } catch {
    /* CSV */
  }
  return { status: res.status, body, raw, headers: res.headers };
}

async function store(server: TestServer, overrides: Record<string, unknown> = {}): Promise<number> {
  const res = await postLead(server, lead(overrides));
  expect(res.status).toBe(201);
  return res.body.lead_number as number;
}

/** RFC 4180: rows end with CRLF; a quoted cell may hold commas, CRLF and doubled quotes. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i += 1) {
    const ch = text[i];
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        cell += '"';
        i += 1;
      } else if (ch === '"') quoted = false;
      else cell += ch;
    } else if (ch === '"' && cell === '') quoted = true;
    else if (ch === ',') {
      row.push(cell);
      cell = '';
    } else if (ch === '\r' && text[i + 1] === '\n') {
      row.push(cell);
      rows.push(row);
      row = [];
      cell = '';
      i += 1;
    } else if (ch === '\n' || ch === '\r') throw new Error(`bare line break at ${i}`);
    else cell += ch;
  }
  if (cell !== '' || row.length > 0) throw new Error('last row without CRLF');
  return rows;
}

const COLUMNS = [
  'number',
  'created_at',
  'created_local',
  'received_at',
  'received_local',
  'status',
  'status_changed_by',
  'name',
  'telegram',
  'phone',
  'date',
  'guests',
  'comment',
  'source',
  'utm_source',
  'utm_medium',
  'utm_campaign',
  'utm_content',
  'utm_term',
  'referrer',
  'consent_accepted_at',
  'consent_policy_url',
  'repeats',
  'captcha',
];

describe('GET /leads', () => {
  it('pages through 250 leads newest first with no gaps or repeats while new leads arrive between pages', async () => {
    const server = await start({ dbPath: join(tmp.dir, `export-${++n}.sqlite`), sandbox: undefined, env: NO_RATE_LIMITS });
    const first: number[] = [];
    for (let i = 0; i < 250; i += 1) {
      first.push(await store(server));
      server.clock.advance(1000);
    }
    const seen: number[] = [];
    const arrived: number[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res = await get(server, `/leads?limit=60${cursor ? `&cursor=${cursor}` : ''}`);
      expect(res.status).toBe(200);
      pages += 1;
      seen.push(...res.body.leads.map((l: { lead_number: number }) => l.lead_number));
      cursor = res.body.next_cursor;
      // New leads arrive between pages: newer than any page read, so they never show up in the later pages.
      for (let i = 0; i < 3; i += 1) arrived.push(await store(server));
    } while (cursor);
    expect(pages).toBe(5);
    expect(seen).toEqual([...first].reverse());
    expect(new Set(seen).size).toBe(250);
    expect(arrived.every((id) => id > Math.max(...first))).toBe(true);
    // A fresh read starts with the newest.
    const fresh = await get(server, '/leads');
    expect(fresh.body.leads).toHaveLength(50);
    expect(fresh.body.leads[0].lead_number).toBe(arrived[arrived.length - 1]);
  });

  it('filters by since, until and status; shows personal fields, null once anonymised; refuses bad parameters with 422', async () => {
    const server = await start({ dbPath: join(tmp.dir, `export-${++n}.sqlite`), sandbox: undefined, env: NO_RATE_LIMITS });
    const t0 = server.clock.now();
    const a = await store(server, { name: 'Первая Заявка' });
    server.clock.advance(2 * HOUR);
    const b = await store(server, { name: 'Вторая Заявка' });
    server.clock.advance(2 * HOUR);
    const c = await store(server, { name: 'Третья Заявка' });
    await sqlRun(server.db, "update leads set status = 'won' where id = ?", b);
    await sqlRun(server.db, 'update leads set name = null, phone = null, anonymised_at = ? where id = ?', t0, c);
    const numbers = async (q: string) =>
      ((await get(server, `/leads${q}`)).body.leads as { lead_number: number }[]).map((l) => l.lead_number);
    expect(await numbers('')).toEqual([c, b, a]);
    expect(await numbers(`?since=${t0 + HOUR}`)).toEqual([c, b]);
    expect(await numbers(`?until=${new Date(t0 + 3 * HOUR).toISOString()}`)).toEqual([b, a]);
    expect(await numbers(`?since=${new Date(t0 + HOUR).toISOString()}&until=${t0 + 3 * HOUR}`)).toEqual([b]);
    expect(await numbers('?status=won')).toEqual([b]);
    const all = (await get(server, '/leads')).body.leads;
    expect(all[2]).toMatchObject({ lead_number: a, name: 'Первая Заявка', status: 'new', repeats: 0, anonymised_at: null });
    expect(all[2].phone).toMatch(/^\+7999/);
    expect(all[0]).toMatchObject({ lead_number: c, name: null, phone: null });
    for (const bad of ['?status=open', '?since=yesterday', '?limit=0', '?limit=201', '?cursor=nonsense', `?since=${t0}&until=${t0}`]) {
      const res = await get(server, `/leads${bad}`);
      expect({ bad, status: res.status, error: res.body.error }).toEqual({ bad, status: 422, error: 'invalid_query' });
      expect(Object.keys(res.body.errors).length).toBeGreaterThan(0);
    }
    expect((await get(server, '/leads?status=open')).body.errors.status).toContain('new');
    expect((await get(server, '/leads', 'wrong-secret')).status).toBe(401);
    expect((await get(server, '/leads/export.csv?until=soon')).status).toBe(422);
  });
});

describe('GET /leads/export.csv', () => {
  it('is UTF-8 with a BOM, CRLF rows, the right columns, Cyrillic intact and formulas neutralised', async () => {
    const server = await start({ dbPath: join(tmp.dir, `export-${++n}.sqlite`), sandbox: undefined, env: NO_RATE_LIMITS });
    const a = await store(server, {
      name: 'Ёлка Щукина',
      comment: '=HYPERLINK("http://evil","жми"), и "кавычки"\nвторая строка',
      guests: '-5',
    });
    server.clock.advance(HOUR);
    const b = await store(server, {
      name: '@Иван',
      comment: null,
      date: '+1 день',
      source: { landing: 'wedding', utm_source: 'yandex', utm_campaign: 'лето', referrer: 'ya.ru' },
    });
    const res = await get(server, '/leads/export.csv');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/csv');
    expect([...res.raw.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    const rows = parseCsv(res.raw.subarray(3).toString('utf8'));
    expect(rows[0]).toEqual(COLUMNS);
    expect(rows).toHaveLength(3);
    const byNumber = new Map(rows.slice(1).map((r) => [Number(r[0]), Object.fromEntries(COLUMNS.map((c, i) => [c, r[i]]))]));
    const first = byNumber.get(a)!;
    expect(first.name).toBe('Ёлка Щукина');
    expect(first.comment).toBe('\'=HYPERLINK("http://evil","жми"), и "кавычки"\nвторая строка');
    expect(first.guests).toBe("'-5");
    expect(first.phone).toMatch(/^'\+7999/);
    expect(first.telegram).toMatch(/^'@anna_/);
    expect(first.status).toBe('new');
    expect(first.repeats).toBe('0');
    expect(first.created_at).toBe(new Date(server.clock.now() - HOUR).toISOString());
    // LEADS_TIMEZONE defaults to Europe/Moscow: 09:00 UTC is 12:00 there.
    expect(first.created_local).toBe('2026-11-29 12:00:00');
    const second = byNumber.get(b)!;
    expect(second.name).toBe("'@Иван");
    expect(second.date).toBe("'+1 день");
    expect(second.comment).toBe('');
    expect(rows[1][0]).toBe(String(b));
    // Where each lead came from: empty cells without a source.
    expect([second.source, second.utm_source, second.utm_medium, second.utm_campaign, second.referrer]).toEqual([
      'wedding',
      'yandex',
      '',
      'лето',
      'ya.ru',
    ]);
    expect([first.source, first.utm_source, first.referrer]).toEqual(['', '', '']);
    const listed = (await get(server, '/leads')).body.leads as { lead_number: number; source: unknown }[];
    expect(listed.find((l) => l.lead_number === b)!.source).toEqual({
      landing: 'wedding',
      utm_source: 'yandex',
      utm_medium: null,
      utm_campaign: 'лето',
      utm_content: null,
      utm_term: null,
      referrer: 'ya.ru',
    });
    expect(listed.find((l) => l.lead_number === a)!.source).toBeNull();
    const won = await get(server, '/leads/export.csv?status=won');
    expect(parseCsv(won.raw.subarray(3).toString('utf8'))).toEqual([COLUMNS]);
  });
});

describe('OpenAPI', () => {
  it('lists GET /leads, GET /leads/export.csv and the /stickers_export command', async () => {
    const server = await start({ dbPath: join(tmp.dir, `export-${++n}.sqlite`), sandbox: undefined });
    const doc = (await (await fetch(`${server.url}/openapi.json`)).json()) as any;
    expect(doc.paths['/leads'].get.parameters.map((p: { name: string }) => p.name)).toEqual([
      'since',
      'until',
      'status',
      'limit',
      'cursor',
    ]);
    expect(Object.keys(doc.paths['/leads'].get.responses).sort()).toEqual(['200', '401', '404', '422', '429', '503']);
    expect(doc.paths['/leads/export.csv'].get.parameters.map((p: { name: string }) => p.name)).toEqual(['since', 'until', 'status']);
    expect(doc.paths['/leads/export.csv'].get['x-telegram-command'].command).toBe('/stickers_export [days]');
  });
});

describe('/stickers_export', () => {
  const OTHER: SandboxUser = { id: 502, is_bot: false, first_name: 'Олег', username: 'oleg_mgr' };

  it('sends the CSV of the last days as a document to the admin chat, for managers only', async () => {
    const clock = new FakeClock();
    const server = await start({
      dbPath: join(tmp.dir, `export-${++n}.sqlite`),
      clock,
      polling: true,
      env: { ...NO_RATE_LIMITS, LEADS_MANAGER_IDS: '501' },
    });
    await botLaunched(sandbox);
    const old = await store(server, { name: 'Старая Заявка' });
    clock.advance(10 * 24 * HOUR);
    const recent = await store(server, { name: 'Свежая Заявка', comment: '+напомнить' });
    await server.outbox.whenIdle();

    expect(await command(LEADS_CHAT, '/stickers_export')).toBe('Выгрузка приходит только в чат админов.');
    expect(await command(ADMIN_CHAT, '/stickers_export', OTHER)).toBe('Выгружать заявки могут только менеджеры.');
    expect(await command(ADMIN_CHAT, '/stickers_export 0')).toContain('Укажите число дней');
    expect(sandbox.messages(ADMIN_CHAT).some((m: any) => m.document)).toBe(false);

    expect(await command(ADMIN_CHAT, '/stickers_export')).toBe('📎 Выгрузка за 7 дн.: 1 заявок (файл выше).');
    const doc = sandbox.messages(ADMIN_CHAT).find((m: any) => m.document)!;
    expect(doc.document).toMatchObject({ file_name: 'leads-7d.csv' });
    const content = sandbox.state.documents.get(doc.document!.file_id)!;
    expect(doc.document!.file_size).toBe(content.length);
    expect([...content.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    const rows = parseCsv(content.subarray(3).toString('utf8'));
    expect(rows.map((r) => r[0])).toEqual(['number', String(recent)]);
    expect(rows[1][7]).toBe('Свежая Заявка');
    expect(rows[1][12]).toBe("'+напомнить");
    expect(sandbox.messages(LEADS_CHAT).some((m: any) => m.document)).toBe(false);

    expect(await command(ADMIN_CHAT, '/stickers_export 30')).toBe('📎 Выгрузка за 30 дн.: 2 заявок (файл выше).');
    const docs = sandbox.messages(ADMIN_CHAT).filter((m: any) => m.document);
    expect(docs).toHaveLength(2);
    const all = parseCsv(sandbox.state.documents.get(docs[1].document!.file_id)!.subarray(3).toString('utf8'));
    expect(all.map((r) => r[0])).toEqual(['number', String(recent), String(old)]);
  });
});
