/**
 * `GET /inbox/api/charts` against the real app and its database (SQLite, or PostgreSQL with
 * LEADS_TEST_DATABASE=postgres): leads created at chosen times by the server's clock, their statuses changed through
 * the inbox's API, the charts read back over HTTP with launch data signed by the sandbox.
 */
import { join } from 'node:path';
import { DEFAULT_USER, signInitData } from '@stickers/telegram-sandbox';
import request from 'supertest';
import { NO_RATE_LIMITS, sandboxSuite, submitLead, type TestServer } from './harness';

const { tmp, sandbox, start } = sandboxSuite();
let n = 0;
const startInbox = (env: Record<string, string> = {}) =>
  start({ dbPath: join(tmp.dir, `charts-${(n += 1)}.sqlite`), env: { ...NO_RATE_LIMITS, ...env } });

async function call(server: TestServer, path: string, o: { method?: 'GET' | 'POST'; body?: unknown; auth?: boolean } = {}) {
  const initData = signInitData({ botToken: sandbox.token, user: DEFAULT_USER, authDate: Math.floor(server.clock.now() / 1000) });
  const http = request(server.app.getHttpServer());
  const test = o.method === 'POST' ? http.post(`/inbox/api/${path}`) : http.get(`/inbox/api/${path}`);
  if (o.auth !== false) test.set('Authorization', `tma ${initData}`);
  if (o.body !== undefined) test.set('Content-Type', 'application/json').send(JSON.stringify(o.body));
  const res = await test;
  return { status: res.status, body: JSON.parse(res.text), headers: res.headers as Record<string, string> };
}

/** A lead created at `at` (the server's clock), from `landing` (null: no source). */
async function leadAt(server: TestServer, at: number, landing: string | null): Promise<number> {
  server.clock.t = at;
  return submitLead(server, landing === null ? {} : { source: { landing } });
}

/** Changes a lead's status `afterS` seconds after `at`, through the inbox. */
async function changeAt(server: TestServer, number: number, at: number, expected: string, status: string): Promise<void> {
  server.clock.t = at;
  const res = await call(server, `leads/${number}/status`, { method: 'POST', body: { status, expected } });
  expect(res.status).toBe(200);
}

const utc = (month: number, day: number, hour: number, minute = 0) => Date.UTC(2026, month - 1, day, hour, minute);
const TODAY = utc(11, 29, 9); // 12:00 in Moscow (LEADS_TIMEZONE's default)
const zeros = () => new Array<number>(30).fill(0);

describe('GET /inbox/api/charts', () => {
  it('counts leads per local day and source over the last 30 days, the funnel, the median first change, and filters by source', async () => {
    const server = await startInbox();
    // Before the window: its lead and its change count nowhere.
    const old = await leadAt(server, utc(10, 20, 9), 'wedding');
    await changeAt(server, old, utc(10, 20, 9) + 100_000, 'new', 'spam');
    // 23:30 on 30 October in Moscow (outside), 00:30 on 31 October (the first day).
    await leadAt(server, utc(10, 30, 20, 30), 'wedding');
    await leadAt(server, utc(10, 30, 21, 30), 'wedding');
    const created = utc(11, 20, 10);
    const a = await leadAt(server, created, 'wedding');
    const b = await leadAt(server, created, 'corporate');
    const c = await leadAt(server, created, null);
    await changeAt(server, a, created + 600_000, 'new', 'in_progress');
    await changeAt(server, b, created + 1_800_000, 'new', 'in_progress');
    await changeAt(server, b, created + 7_200_000, 'in_progress', 'won'); // a later change: not the first
    await changeAt(server, c, created + 3_000_000, 'new', 'spam');
    await leadAt(server, utc(11, 29, 8), 'wedding');
    await leadAt(server, utc(11, 29, 8, 30), 'wedding');
    server.clock.t = TODAY;

    const all = await call(server, 'charts');
    expect(all.status).toBe(200);
    expect(all.headers['cache-control']).toBe('no-store');
    const { svg, ...numbers } = all.body;
    const wedding = zeros();
    [wedding[0], wedding[20], wedding[29]] = [1, 1, 2];
    const corporate = zeros();
    corporate[20] = 1;
    const none = zeros();
    none[20] = 1;
    expect(numbers.days).toHaveLength(30);
    expect([numbers.days[0], numbers.days[20], numbers.days[29]]).toEqual(['2026-10-31', '2026-11-20', '2026-11-29']);
    expect(numbers.per_day).toEqual([
      { source: 'wedding', counts: wedding },
      { source: 'corporate', counts: corporate },
      { source: null, counts: none },
    ]);
    expect(numbers.funnel).toEqual({ new: 3, in_progress: 1, won: 1, lost: 0, spam: 1 });
    // The first changes: 600 s, 1800 s, 3000 s.
    expect(numbers.median_first_change_s).toBe(1800);

    expect(svg.per_day).toMatch(/^<svg [^>]*class="chart per-day" role="img"/);
    expect(svg.per_day).toContain('<title>Заявки по дням за 30 дней</title>');
    expect(svg.per_day).toContain(
      'aria-label="Заявки по дням за 30 дней: всего 6; больше всего 3 — 20.11; wedding — 4; corporate — 1; без источника — 1"',
    );
    // The bars: per source in per_day's order, drawn for the page's CSS (no colour of their own), text in currentColor.
    expect(svg.per_day.match(/class="bar s0"/g)).toHaveLength(3);
    expect(svg.per_day.match(/class="bar s1"/g)).toHaveLength(1);
    expect(svg.per_day.match(/class="bar s2"/g)).toHaveLength(1);
    expect(svg.per_day).not.toMatch(/<rect class="bar[^>]* fill=/);
    expect(svg.per_day).toContain('fill="currentColor"');
    expect(svg.funnel).toMatch(/^<svg [^>]*class="chart funnel" role="img"/);
    expect(svg.funnel).toContain('<title>Заявки за 30 дней по статусу сейчас</title>');
    expect(svg.funnel).toContain('🆕 Новая — 3; 🛠 В работе — 1; ✅ Заказ — 1; ❌ Отказ — 0; 🚫 Спам — 1');

    const onlyWedding = await call(server, 'charts?source=wedding');
    expect(onlyWedding.body.per_day).toEqual([{ source: 'wedding', counts: wedding }]);
    expect(onlyWedding.body.funnel).toEqual({ new: 3, in_progress: 1, won: 0, lost: 0, spam: 0 });
    expect(onlyWedding.body.median_first_change_s).toBe(600);
    expect(onlyWedding.body.svg.per_day).toContain('<title>Заявки по дням за 30 дней, источник wedding</title>');

    const withoutSource = await call(server, 'charts?source=none');
    expect(withoutSource.body.per_day).toEqual([{ source: null, counts: none }]);
    expect(withoutSource.body.funnel).toEqual({ new: 0, in_progress: 0, won: 0, lost: 0, spam: 1 });
    expect(withoutSource.body.median_first_change_s).toBe(3000);

    const unknown = await call(server, 'charts?source=nobody');
    expect(unknown.body.per_day).toEqual([]);
    expect(unknown.body.median_first_change_s).toBeNull();
    expect(unknown.body.svg.per_day).toContain('всего 0');
  });

  it('takes the median of two middles for an even count', async () => {
    const server = await startInbox();
    const created = utc(11, 28, 10);
    for (const wait of [60, 120, 600, 6000]) {
      const lead = await leadAt(server, created, 'wedding');
      await changeAt(server, lead, created + wait * 1000, 'new', 'in_progress');
    }
    server.clock.t = TODAY;
    expect((await call(server, 'charts')).body.median_first_change_s).toBe(360);
  });

  it("counts a late lead's wait from its arrival, not from the visitor's time on the landing", async () => {
    const server = await startInbox();
    const arrived = utc(11, 28, 10);
    server.clock.t = arrived;
    const late = { submitted_at: new Date(arrived - 3 * 86_400_000).toISOString(), route: 'lost', reason: '503' };
    const lead = await submitLead(server, { source: { landing: 'wedding' }, late });
    await changeAt(server, lead, arrived + 60_000, 'new', 'in_progress');
    server.clock.t = TODAY;
    expect((await call(server, 'charts')).body.median_first_change_s).toBe(60);
  });

  it("cuts days at LEADS_TIMEZONE's midnight, also at an offset of half an hour", async () => {
    const server = await startInbox({ LEADS_TIMEZONE: 'Asia/Kolkata' });
    await leadAt(server, utc(11, 28, 18, 20), 'wedding'); // 23:50 on the 28th in Kolkata (UTC+5:30)
    await leadAt(server, utc(11, 28, 18, 40), 'wedding'); // 00:10 on the 29th
    server.clock.t = TODAY;
    const charts = (await call(server, 'charts')).body;
    expect(charts.days.at(-1)).toBe('2026-11-29');
    expect(charts.per_day[0].counts.slice(-2)).toEqual([1, 1]);
  });

  it('answers 422 for a bad source and 401 without launch data', async () => {
    const server = await startInbox();
    const bad = await call(server, 'charts?source=%20nope!');
    expect([bad.status, bad.body]).toEqual([
      422,
      { error: 'invalid_query', errors: { source: 'must be a source name (as LANDING_SOURCE) or none' } },
    ]);
    const anonymous = await call(server, 'charts', { auth: false });
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers['cache-control']).toBe('no-store');
  });
});
