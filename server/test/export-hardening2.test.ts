/**
 * Export, second hardening pass, against the real app on both databases: one strict reading of `since`, `until` and
 * `cursor` (a day that does not exist, a cursor whose id is no safe integer → 422 `invalid_query`, never a roll-over
 * or a 500); the CSV read as a spreadsheet whose list separator is `;` (Excel in ru-RU) reads it, with no cell
 * starting with a formula character; a late lead's arrival beside its visitor's time.
 */
import { join } from 'node:path';
import { SECRET_HEADER } from '@stickers/shared';
import { cursorKey, decodeCursor, encodeCursor, parseExportTime } from '../src/export/export-query';
import { lead, NO_RATE_LIMITS, postLead, SALT, SECRET, sandboxSuite, type TestServer } from './harness';

const MIN = 60 * 1000;
const { tmp, start } = sandboxSuite();
let n = 0;

async function boot(): Promise<TestServer> {
  return start({ dbPath: join(tmp.dir, `export2-${++n}.sqlite`), sandbox: undefined, env: NO_RATE_LIMITS });
}

async function get(server: TestServer, path: string): Promise<{ status: number; body: any; text: string }> {
  const res = await fetch(`${server.url}${path}`, { headers: { [SECRET_HEADER]: SECRET } });
  const text = await res.text();
  let body: unknown = null;
  try {
    body = JSON.parse(text);
  } catch {
    /* CSV */
  }
  return { status: res.status, body, text };
}

async function store(server: TestServer, overrides: Record<string, unknown> = {}): Promise<number> {
  const res = await postLead(server, lead(overrides));
  expect(res.status).toBe(201);
  return res.body.lead_number as number;
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

describe('since, until and cursor: one strict reading', () => {
  it('a day or a time that does not exist is a 422, as the late object refuses it, never a roll-over', async () => {
    const server = await boot();
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

  it('a cursor whose id is not a positive safe integer is a 422 on either database (PostgreSQL answered 500)', async () => {
    const server = await boot();
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
    expect(decodeCursor(encodeCursor(Number.MAX_SAFE_INTEGER, KEY), KEY)).toBe(Number.MAX_SAFE_INTEGER);
  });

  it('parseExportTime: dates at midnight UTC, a zone as given, milliseconds as they are', () => {
    expect(parseExportTime('2026-12-01')).toBe(Date.UTC(2026, 11, 1));
    expect(parseExportTime('2026-12-01T10:00:00.123456789Z')).toBe(Date.UTC(2026, 11, 1, 10, 0, 0, 123));
    expect(parseExportTime('2026-12-01T10:00+0300')).toBe(Date.UTC(2026, 11, 1, 7, 0));
    expect(parseExportTime('2026-12-01 10:00:00-01:30')).toBe(Date.UTC(2026, 11, 1, 11, 30));
    expect(parseExportTime('0001-01-01')).toBe(Date.UTC(2000, 0, 1) - 730119 * 24 * 60 * MIN);
    expect(parseExportTime('1764547200000')).toBe(1764547200000);
    expect(parseExportTime('2026-12-01T10:00')).toBe(new Date(2026, 11, 1, 10, 0).getTime());
    expect(parseExportTime(undefined)).toBeNull();
    expect(parseExportTime('')).toBeNull();
    for (const bad of ['2026-2-01', '2026-12-01T10', '2026-12-01Z', 'tomorrow', '2026-12-01T10:00:00z', ['2026-12-01']]) {
      expect([bad, parseExportTime(bad)]).toEqual([bad, undefined]);
    }
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
    const server = await boot();
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
    const server = await boot();
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
