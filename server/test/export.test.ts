/**
 * Export: `GET /leads` (JSON pages by an opaque cursor), `GET /leads/export.csv` and `/stickers_export`, against the
 * real app on both databases. The CSV is parsed here by a small RFC 4180 parser, and read again as a spreadsheet whose
 * list separator is `;` (Excel in ru-RU) reads it, with no cell starting with a formula character. `since`, `until` and
 * `cursor` have one strict reading: a day that does not exist, a cursor whose id is no safe integer → 422
 * `invalid_query`, never a roll-over or a 500. A late lead shows its visitor's time beside its arrival.
 */
import { SECRET_HEADER } from '@stickers/shared';
import { type SandboxUser } from '@stickers/telegram-sandbox';
import request from 'supertest';
import { cursorKey, encodeCursor, parseExportTime, readCursor } from '../src/export/export-query';
import { ADMIN_CHAT, FakeClock, LEADS_CHAT, SALT, SECRET, lead, memberActions, postLead, sandboxSuite, type TestServer } from './harness';
import { sqlRun } from './support/test-database';

const MIN = 60 * 1000;
const HOUR = 60 * MIN;
const { sandbox, boot } = sandboxSuite();
const { command } = memberActions(sandbox);
/** An app without Telegram, on a fresh database. */
const bootApi = () => boot({ sandbox: undefined });

async function get(
  server: TestServer,
  path: string,
  secret = SECRET,
): Promise<{ status: number; body: any; raw: Buffer; text: string; headers: Record<string, string> }> {
  // The body as bytes, whatever its type: the CSV's byte order mark is checked byte by byte.
  const res = await request(server.app.getHttpServer()).get(path).set(SECRET_HEADER, secret).responseType('blob');
  const raw = res.body as Buffer;
  let body: unknown = null;
  try {
    body = JSON.parse(raw.toString('utf8'));
  } catch {
    /* CSV */
  }
  return { status: res.status, body, raw, text: raw.toString('utf8'), headers: res.headers };
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

/** The key the test server signs its cursors with. */
const KEY = cursorKey(SECRET, SALT);
const cursorOf = (json: string) => Buffer.from(json).toString('base64url');

/**
 * How a spreadsheet reads delimited text (Excel's and Python's csv rules): a field that starts with `"` is quoted
 * until a lone `"` (`""` is one quote), and whatever follows the closing quote up to the next delimiter is appended as
 * it is; a `"` anywhere else is an ordinary character; a line break outside quotes ends the row.
 */
function readDelimited(text: string, delimiters: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let state: 'start' | 'plain' | 'quoted' | 'quote_in_quoted' = 'start';
  const endCell = () => {
    row.push(cell);
    cell = '';
    state = 'start';
  };
  for (let i = 0; i < text.length; i += 1) {
    const ch = text[i];
    if (state === 'quoted') {
      if (ch === '"') state = 'quote_in_quoted';
      else cell += ch;
      continue;
    }
    if (state === 'quote_in_quoted') {
      if (ch === '"') {
        cell += '"';
        state = 'quoted';
        continue;
      }
      state = 'plain';
    }
    if (delimiters.includes(ch)) endCell();
    else if (ch === '\r' || ch === '\n') {
      if (ch === '\r' && text[i + 1] === '\n') i += 1;
      endCell();
      rows.push(row);
      row = [];
    } else if (ch === '"' && state === 'start') state = 'quoted';
    else {
      cell += ch;
      state = 'plain';
    }
  }
  if (cell !== '' || row.length > 0) {
    row.push(cell);
    rows.push(row);
  }
  return rows;
}

const FORMULA = /^[=+\-@\t\r]/;

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
    const server = await bootApi();
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
    const server = await bootApi();
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

describe('GET /leads/{lead_number}', () => {
  it('answers one lead as GET /leads lists it, its personal fields null once anonymised; 404 for no such lead or no number', async () => {
    const server = await bootApi();
    const a = await store(server, { name: 'Одна Заявка' });
    const b = await store(server, { name: 'Другая Заявка' });
    await sqlRun(server.db, "update leads set status = 'won' where id = ?", a);
    const listed = (await get(server, '/leads')).body.leads as { lead_number: number }[];
    for (const n of [a, b]) {
      const one = await get(server, `/leads/${n}`);
      expect([one.status, one.body]).toEqual([200, { lead: listed.find((l) => l.lead_number === n) }]);
    }
    expect((await get(server, `/leads/${a}`)).body.lead).toMatchObject({ status: 'won', name: 'Одна Заявка' });
    await sqlRun(server.db, 'update leads set name = null, phone = null, anonymised_at = ? where id = ?', server.clock.now(), b);
    expect((await get(server, `/leads/${b}`)).body.lead).toMatchObject({ lead_number: b, name: null, phone: null });
    for (const path of ['/leads/999', '/leads/0', '/leads/07', '/leads/abc', '/leads/1.5']) {
      const res = await get(server, path);
      expect([path, res.status, res.body]).toEqual([path, 404, { error: 'not_found' }]);
    }
    expect((await get(server, `/leads/${a}`, `${SECRET}-wrong`)).status).toBe(401);
    // The CSV's path is no lead number: it is still the CSV.
    expect((await get(server, '/leads/export.csv')).headers['content-type']).toContain('text/csv');
  });
});

describe('answers behind the secret', () => {
  it('are Cache-Control: no-store (they hold personal data): the leads, one lead, the CSV, a refused query, a trace, the events, a status change', async () => {
    const server = await bootApi();
    const n = await store(server);
    for (const path of ['/leads', `/leads/${n}`, '/leads/export.csv', '/leads?limit=0', `/leads/${n}/trace`, '/webhooks/events']) {
      const res = await get(server, path);
      expect([path, res.status < 500, res.headers['cache-control']]).toEqual([path, true, 'no-store']);
    }
    const change = await request(server.app.getHttpServer())
      .post(`/leads/${n}/status`)
      .set(SECRET_HEADER, SECRET)
      .send({ from: 'new', to: 'in_progress', by: 'CRM' });
    expect([change.status, change.headers['cache-control']]).toEqual([200, 'no-store']);
  });

  it('are Cache-Control: no-store when refused before the route too: a wrong secret (401), the caller throttled (429)', async () => {
    const server = await boot({ sandbox: undefined, env: { LEADS_THROTTLE_API: '1' } });
    const wrong = await get(server, '/leads', 'not-the-secret');
    const flooded = await get(server, '/leads');
    expect([wrong.status, wrong.headers['cache-control']]).toEqual([401, 'no-store']);
    expect([flooded.status, flooded.body, flooded.headers['cache-control']]).toEqual([
      429,
      { error: 'rate_limited', why: 'flood' },
      'no-store',
    ]);
  });
});

describe('since, until and cursor: one strict reading', () => {
  it('a time without a zone is LEADS_TIMEZONE’s, as the CSV’s created_local; past the millisecond rounds up', async () => {
    const server = await boot({ sandbox: undefined, env: { LEADS_TIMEZONE: 'Asia/Tokyo' } });
    const id = await store(server);
    const [header, row] = parseCsv((await get(server, '/leads/export.csv')).text.replace(/^\uFEFF/, ''));
    const local = row[header.indexOf('created_local')];
    expect(new Date(`${local.replace(' ', 'T')}+09:00`).getTime()).toBe(server.clock.now());
    const numbers = async (query: string) => (await get(server, `/leads?${query}`)).body.leads.map((l: any) => l.lead_number);
    expect(await numbers(`since=${encodeURIComponent(local)}`)).toEqual([id]);
    expect(await numbers(`until=${encodeURIComponent(local)}`)).toEqual([]);
    const justAfter = encodeURIComponent(`${new Date(server.clock.now()).toISOString().slice(0, -1)}0001Z`);
    expect(await numbers(`until=${justAfter}`)).toEqual([id]);
    expect(await numbers(`since=${justAfter}`)).toEqual([]);
    expect(await numbers(`updated_since=${justAfter}`)).toEqual([]);
  });

  it('a day or a time that does not exist is a 422, as the late object refuses it, never a roll-over', async () => {
    const server = await bootApi();
    await store(server);
    for (const bad of [
      'since=2026-02-30',
      'since=2026-02-29',
      'until=2026-13-01',
      'until=2026-04-31T10:00:00Z',
      'since=2026-12-01T24:00:00Z',
      'since=2026-12-01T10:60Z',
      'since=2026-12-01T10:00:60Z',
      'since=2026-12-01T10:00:00%2B24:00',
      'until=2026-12-01T10:00:00-03:60',
    ]) {
      const res = await get(server, `/leads?${bad}`);
      expect({ bad, status: res.status, body: res.body }).toEqual({
        bad,
        status: 422,
        body: {
          error: 'invalid_query',
          errors: {
            [bad.split('=')[0]]: 'must be an ISO 8601 date or time that exists (no 30 February, no 24:00), or milliseconds since the epoch',
          },
        },
      });
      expect((await get(server, `/leads/export.csv?${bad}`)).status).toBe(422);
    }
    // Two valid values of one parameter: it must be given once, on the list and the CSV alike.
    for (const path of ['/leads', '/leads/export.csv']) {
      const twice = await get(server, `${path}?status=won&status=lost`);
      expect([twice.status, twice.body]).toEqual([422, { error: 'invalid_query', errors: { status: 'must be given once' } }]);
      // A name no route reads is ignored, twice as once.
      expect((await get(server, `${path}?utm=a&utm=b`)).status).toBe(200);
    }
    // What exists is read as before.
    for (const good of [
      'since=2028-02-29',
      'since=2026-11-01T00:00:00%2B03:00',
      'until=2099-01-01 00:00Z',
      'since=0',
      'since=2026-01-01T00:00',
    ]) {
      expect([good, (await get(server, `/leads?${good}`)).status]).toEqual([good, 200]);
    }
  });

  it('a cursor whose id is not a positive safe integer is a 422 on either database, never a 500', async () => {
    const server = await bootApi();
    const last = await store(server);
    for (const json of [
      '{"id":1e308}',
      '{"id":9007199254740993}',
      '{"id":1.5}',
      '{"id":0}',
      '{"id":-3}',
      '{"id":"5"}',
      '{}',
      'null',
      '[1]',
    ]) {
      const res = await get(server, `/leads?cursor=${cursorOf(json)}`);
      expect({ json, status: res.status, body: res.body }).toEqual({
        json,
        status: 422,
        body: { error: 'invalid_query', errors: { cursor: 'is not a cursor this API gave' } },
      });
    }
    // Only the text the API gives: not another spelling of the same JSON, not base64 with padding or junk around it.
    for (const cursor of [
      cursorOf('{"id": 2}'),
      `${encodeCursor(last + 1, KEY)}==`,
      `${encodeCursor(last + 1, KEY)}!`,
      `%20${encodeCursor(last + 1, KEY)}`,
    ]) {
      expect([cursor, (await get(server, `/leads?cursor=${cursor}`)).status]).toEqual([cursor, 422]);
    }
    const page = await get(server, `/leads?cursor=${encodeCursor(last + 1, KEY)}`);
    expect(page.status).toBe(200);
    expect(page.body.leads.map((l: { lead_number: number }) => l.lead_number)).toEqual([last]);
    expect(readCursor(encodeCursor(Number.MAX_SAFE_INTEGER, KEY), KEY)).toEqual({ id: Number.MAX_SAFE_INTEGER, updatedAt: null });
  });

  it('parseExportTime: dates at midnight UTC, a zone as given, else LEADS_TIMEZONE; past the millisecond rounds up', () => {
    expect(parseExportTime('2026-12-01')).toBe(Date.UTC(2026, 11, 1));
    expect(parseExportTime('2026-12-01T10:00:00.123456789Z')).toBe(Date.UTC(2026, 11, 1, 10, 0, 0, 124));
    expect(parseExportTime('2026-12-01T10:00+0300')).toBe(Date.UTC(2026, 11, 1, 7, 0));
    expect(parseExportTime('2026-12-01 10:00:00-01:30')).toBe(Date.UTC(2026, 11, 1, 11, 30));
    expect(parseExportTime('0001-01-01')).toBe(Date.UTC(2000, 0, 1) - 730119 * 24 * 60 * MIN);
    expect(parseExportTime('1764547200000')).toBe(1764547200000);
    // Past the millisecond rounds up: a lead at .000 is before …00.0001 and not at or after it.
    expect(parseExportTime('2026-12-01T10:00:00.0001Z')).toBe(Date.UTC(2026, 11, 1, 10, 0, 0, 1));
    expect(parseExportTime('2026-12-01T10:00:00.9991Z')).toBe(Date.UTC(2026, 11, 1, 10, 0, 1));
    // Without a zone: the wall clock of the zone given (LEADS_TIMEZONE), UTC by default.
    expect(parseExportTime('2026-12-01T10:00')).toBe(Date.UTC(2026, 11, 1, 10, 0));
    expect(parseExportTime('2026-12-01T10:00', 'Europe/Moscow')).toBe(Date.UTC(2026, 11, 1, 7, 0));
    expect(parseExportTime('2026-03-29T02:30', 'Europe/Berlin')).toBeUndefined();
    expect(parseExportTime('2026-03-29T03:00', 'Europe/Berlin')).toBe(Date.UTC(2026, 2, 29, 1, 0));
    expect(parseExportTime('2026-10-25T02:30', 'Europe/Berlin')).toBe(Date.UTC(2026, 9, 25, 0, 30));
    expect(parseExportTime('0001-01-01T00:00')).toBe(parseExportTime('0001-01-01'));
    expect(parseExportTime(undefined)).toBeNull();
    expect(parseExportTime('')).toBeNull();
    for (const bad of ['2026-2-01', '2026-12-01T10', '2026-12-01Z', 'tomorrow', '2026-12-01T10:00:00z', ['2026-12-01']]) {
      expect([bad, parseExportTime(bad)]).toEqual([bad, undefined]);
    }
  });
});

describe('GET /leads/export.csv', () => {
  it('is UTF-8 with a BOM, CRLF rows, the right columns, Cyrillic intact and formulas neutralised', async () => {
    const server = await bootApi();
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
    expect(res.headers['content-type']).toContain('text/csv');
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

describe('the CSV read with `;` as the list separator (Excel in ru-RU)', () => {
  const hostile = [
    'Ann;=1+1',
    "hello;=cmd|' /C calc'!A0;",
    'Мария;+79990001122',
    'Олег;-2+3',
    'Ира;@SUM(A1)',
    'Тест;\t=1',
    'a;"=1+1"',
    'b;""=2',
    'c;"\r\n=3',
    'строка\r\n=HYPERLINK("http://evil")',
    'd,=4',
    'e\t=5',
  ];

  it('quotes every cell that holds a `;`, and no cell any reader splits off starts with a formula character', async () => {
    const server = await bootApi();
    const numbers: number[] = [];
    for (const [i, text] of hostile.entries()) {
      numbers.push(await store(server, { name: `Гость ${i}`, comment: text }));
    }
    const names = ['Ann;=1+1', 'Bob;+1', 'Eve;@x'];
    for (const name of names) numbers.push(await store(server, { name, comment: null }));
    const res = await get(server, '/leads/export.csv');
    expect(res.status).toBe(200);
    const text = res.text.replace(/^\uFEFF/, '');

    // The file's own reader (`,`): every value comes back, a `'` before each formula start, the cells whole.
    const rows = readDelimited(text, ',');
    expect(rows.every((r) => r.length === rows[0].length)).toBe(true);
    const comments = new Map(rows.slice(1).map((r) => [Number(r[0]), r[rows[0].indexOf('comment')]]));
    expect(comments.get(numbers[0])).toBe("Ann;'=1+1");
    expect(comments.get(numbers[1])).toBe("hello;'=cmd|' /C calc'!A0;");
    expect(comments.get(numbers[9])).toBe('строка\n\'=HYPERLINK("http://evil")');
    const byName = new Map(rows.slice(1).map((r) => [r[rows[0].indexOf('name')], r]));
    expect([...byName.keys()].filter((k) => names.some((nm) => k.startsWith(nm.split(';')[0])))).toEqual([
      "Eve;'@x",
      "Bob;'+1",
      "Ann;'=1+1",
    ]);
    // Every cell holding a `;` is quoted in the file.
    for (const value of ["Ann;'=1+1", "Bob;'+1"]) expect(text).toContain(`,"${value}",`);

    // A reader splitting at `;` only, and one splitting at both (LibreOffice's import with both ticked).
    for (const delimiters of [';', ',;', ';\t']) {
      const cells = readDelimited(text, delimiters).flat();
      const formulas = cells.filter((c) => FORMULA.test(c));
      expect([delimiters, formulas]).toEqual([delimiters, []]);
    }
  });
});

describe('a late lead in the export', () => {
  it('shows when the visitor sent it (created_at) and when the server received it (received_at), in JSON and CSV', async () => {
    const server = await bootApi();
    const submittedAt = server.clock.now() - 45 * MIN;
    const body = {
      ...lead({ name: 'Вера Поздняя' }),
      late: { submitted_at: new Date(submittedAt).toISOString(), route: 'lost', reason: 'timeout' },
    };
    const res = await postLead(server, body);
    expect(res.status).toBe(201);
    const id = res.body.lead_number as number;
    const listed = (await get(server, '/leads')).body.leads.find((l: { lead_number: number }) => l.lead_number === id);
    expect(listed).toMatchObject({
      created_at: new Date(submittedAt).toISOString(),
      received_at: new Date(server.clock.now()).toISOString(),
    });
    const rows = readDelimited((await get(server, '/leads/export.csv')).text.replace(/^\uFEFF/, ''), ',');
    const row = Object.fromEntries(rows[0].map((c, i) => [c, rows.find((r) => r[0] === String(id))![i]]));
    expect(row).toMatchObject({
      created_at: new Date(submittedAt).toISOString(),
      received_at: new Date(server.clock.now()).toISOString(),
      // LEADS_TIMEZONE defaults to Europe/Moscow: 08:15 and 09:00 UTC are 11:15 and 12:00 there.
      created_local: '2026-11-29 11:15:00',
      received_local: '2026-11-29 12:00:00',
    });
  });
});

describe('OpenAPI', () => {
  it('lists GET /leads, GET /leads/export.csv and the /stickers_export command', async () => {
    const server = await bootApi();
    const doc = (await request(server.app.getHttpServer()).get('/openapi.json')).body;
    expect(doc.paths['/leads'].get.parameters.map((p: { name: string }) => p.name)).toEqual([
      'since',
      'until',
      'status',
      'updated_since',
      'limit',
      'cursor',
    ]);
    expect(Object.keys(doc.paths['/leads'].get.responses).sort()).toEqual(['200', '401', '404', '422', '429', '503']);
    expect(doc.paths['/leads/export.csv'].get.parameters.map((p: { name: string }) => p.name)).toEqual([
      'since',
      'until',
      'status',
      'updated_since',
    ]);
    expect(doc.paths['/leads/export.csv'].get['x-telegram-command'].command).toBe('/stickers_export [days]');
  });
});

describe('/stickers_export', () => {
  const OTHER: SandboxUser = { id: 502, is_bot: false, first_name: 'Олег', username: 'oleg_mgr' };

  it('sends the CSV of the last days as a document to the admin chat, for managers only', async () => {
    const clock = new FakeClock();
    const server = await boot({ clock, polling: true, env: { LEADS_MANAGER_IDS: '501' } });
    const old = await store(server, { name: 'Старая Заявка' });
    clock.advance(10 * 24 * HOUR);
    const recent = await store(server, { name: 'Свежая Заявка', comment: '+напомнить' });
    await server.outbox.whenIdle();

    expect(await command(LEADS_CHAT, '/stickers_export')).toBe('Выгрузка приходит только в чат админов.');
    expect(await command(ADMIN_CHAT, '/stickers_export', OTHER)).toBe('Выгружать заявки могут только менеджеры.');
    expect(await command(ADMIN_CHAT, '/stickers_export 0')).toContain('Укажите число дней');
    expect(sandbox.messages(ADMIN_CHAT).some((m: any) => m.document)).toBe(false);

    expect(await command(ADMIN_CHAT, '/stickers_export')).toBe('📎 Выгрузка за 7 дн.: 1 заявка (файл выше).');
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

    expect(await command(ADMIN_CHAT, '/stickers_export 30')).toBe('📎 Выгрузка за 30 дн.: 2 заявки (файл выше).');
    const docs = sandbox.messages(ADMIN_CHAT).filter((m: any) => m.document);
    expect(docs).toHaveLength(2);
    const all = parseCsv(sandbox.state.documents.get(docs[1].document!.file_id)!.subarray(3).toString('utf8'));
    expect(all.map((r) => r[0])).toEqual(['number', String(recent), String(old)]);
  });
});
