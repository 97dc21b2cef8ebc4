/**
 * `GET /leads?updated_since=`: an integrator's "what changed since I last asked" on both databases. Each lead carries
 * `updated_at` (the latest of its arrival, status change, repeats, card and erasure, kept by the database's triggers
 * from the rows' own times, so the app's moved clock is what counts); the leads changed at or after the time come
 * oldest change first, then by number, and the cursor holds that position. The CSV takes the same parameter.
 */
import { SECRET_HEADER } from '@stickers/shared';
import request from 'supertest';
import { AnonymisationService } from '../src/anonymisation/anonymisation.service';
import { CSV_COLUMNS } from '../src/export/export.service';
import { LeadStatusService } from '../src/lead-status/lead-status.service';
import { LeadPagesRepository } from '../src/repositories/lead-pages.repository';
import { lead, postLead, sandboxSuite, SECRET, submitLead, type TestServer } from './harness';

const MIN = 60 * 1000;
const { boot } = sandboxSuite();

async function get(server: TestServer, path: string): Promise<{ status: number; body: any; text: string }> {
  const res = await request(server.app.getHttpServer()).get(path).set(SECRET_HEADER, SECRET);
  return { status: res.status, body: res.body, text: res.text };
}

/** Every lead of `updated_since=<since>`, page by page (`limit` each): the numbers in order, with their updated_at. */
async function changedSince(
  server: TestServer,
  since: string,
  limit: number,
): Promise<{ numbers: number[]; updated: string[]; pages: number }> {
  const numbers: number[] = [];
  const updated: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const query: string = `/leads?updated_since=${encodeURIComponent(since)}&limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`;
    const page = await get(server, query);
    expect(page.status).toBe(200);
    pages += 1;
    for (const l of page.body.leads as { lead_number: number; updated_at: string }[]) {
      numbers.push(l.lead_number);
      updated.push(l.updated_at);
    }
    cursor = page.body.next_cursor as string | null;
  } while (cursor !== null);
  return { numbers, updated, pages };
}

describe('GET /leads?updated_since=', () => {
  it('gives the leads changed since then (a status, a repeat, an erasure, a new lead) once each, in the order of their changes, paged by its cursor', async () => {
    const server = await boot();
    const telegram = '@changing_lead';
    const [untouched, changing, other] = [
      await submitLead(server),
      await submitLead(server, { telegram, comment: 'first' }),
      await submitLead(server),
    ];
    const t0 = server.clock.now();
    server.clock.advance(MIN);
    const mark = new Date(server.clock.now()).toISOString();
    server.clock.advance(MIN);
    const status = server.app.get(LeadStatusService);
    const press = (leadId: number) =>
      status.set({ leadId, expected: 'new', to: 'in_progress', by: { telegramUserId: 42, name: 'manager' } });
    expect((await press(changing)).kind).toBe('changed');
    server.clock.advance(MIN);
    expect((await press(other)).kind).toBe('changed');
    server.clock.advance(MIN);
    const repeat = await postLead(server, lead({ telegram, comment: 'second' }));
    expect([repeat.status, repeat.body.lead_number]).toEqual([200, changing]);
    await server.outbox.whenIdle();
    const repeated = await get(server, `/leads?updated_since=${server.clock.now()}`);
    expect(repeated.body.leads.map((l: { lead_number: number; updated_at: string }) => [l.lead_number, l.updated_at])).toEqual([
      [changing, new Date(server.clock.now()).toISOString()],
    ]);
    server.clock.advance(MIN);
    expect(await server.app.get(AnonymisationService).forget(changing)).toBe('done');
    const erasedAt = server.clock.now();
    server.clock.advance(MIN);
    const newer = await submitLead(server);

    // Every lead shows when it last changed: the untouched one was stored and its card published at the same t0 (this
    // clock stands still), the second change a millisecond on.
    const all = await get(server, '/leads');
    const updatedOf = new Map((all.body.leads as { lead_number: number; updated_at: string }[]).map((l) => [l.lead_number, l.updated_at]));
    expect(updatedOf.get(untouched)).toBe(new Date(t0 + 1).toISOString());
    expect(updatedOf.get(changing)).toBe(new Date(erasedAt).toISOString());

    // The untouched lead is absent, the changing one comes once (after `other`, whose change was earlier), the new last.
    for (const limit of [1, 2, 50]) {
      const read = await changedSince(server, mark, limit);
      expect(read.numbers).toEqual([other, changing, newer]);
      expect(read.updated).toEqual([...read.updated].sort());
      expect(read.pages).toBe(Math.ceil(3 / limit));
    }
    // From the erasure on: the erased lead (at that very time: "at or after") and the new one.
    expect((await changedSince(server, String(erasedAt), 1)).numbers).toEqual([changing, newer]);
  });

  it('gives a lead again after a later change, so a loop that keeps the last cursor misses nothing', async () => {
    const server = await boot();
    const [first, second] = [await submitLead(server), await submitLead(server)];
    const since = String(server.clock.now());
    const page = await get(server, `/leads?updated_since=${since}&limit=1`);
    expect(page.body.leads.map((l: { lead_number: number }) => l.lead_number)).toEqual([first]);
    server.clock.advance(MIN);
    const status = server.app.get(LeadStatusService);
    expect((await status.set({ leadId: first, expected: 'new', to: 'in_progress', by: { telegramUserId: 1, name: 'm' } })).kind).toBe(
      'changed',
    );
    const rest = await get(server, `/leads?updated_since=${since}&limit=5&cursor=${page.body.next_cursor}`);
    expect(rest.body.leads.map((l: { lead_number: number; status: string }) => [l.lead_number, l.status])).toEqual([
      [second, 'new'],
      [first, 'in_progress'],
    ]);
    expect(rest.body.next_cursor).toBeNull();
  });

  it('the CSV takes it too: the changed leads in the order of their changes', async () => {
    const server = await boot();
    const [first, second, third] = [await submitLead(server), await submitLead(server), await submitLead(server)];
    server.clock.advance(MIN);
    const since = new Date(server.clock.now()).toISOString();
    const status = server.app.get(LeadStatusService);
    for (const leadId of [first, third]) {
      expect((await status.set({ leadId, expected: 'new', to: 'in_progress', by: { telegramUserId: 1, name: 'm' } })).kind).toBe('changed');
      server.clock.advance(MIN);
    }
    const csv = await get(server, `/leads/export.csv?updated_since=${encodeURIComponent(since)}`);
    expect(csv.status).toBe(200);
    const numbers = csv.text
      .trim()
      .split('\r\n')
      .slice(1)
      .map((row) => Number(row.split(',')[0]));
    expect(numbers).toEqual([first, third]);
    expect(numbers).not.toContain(second);
  });

  it("the docs' sync loop ends with every change: a change whose time is not after the lead's updated_at still moves it", async () => {
    const server = await boot({ sandbox: undefined });
    // docs/api.md: remember the greatest updated_at, ask from a minute before it, skip what you have with the same updated_at.
    const have = new Map<number, { status: string; repeats: number; updated_at: string }>();
    let greatest = 0;
    const sync = async () => {
      let cursor: string | null = null;
      do {
        const page = await get(server, `/leads?updated_since=${Math.max(0, greatest - MIN)}${cursor ? `&cursor=${cursor}` : ''}`);
        for (const l of page.body.leads as { lead_number: number; status: string; repeats: number; updated_at: string }[]) {
          if (have.get(l.lead_number)?.updated_at === l.updated_at) continue;
          have.set(l.lead_number, l);
          greatest = Math.max(greatest, Date.parse(l.updated_at));
        }
        cursor = page.body.next_cursor as string | null;
      } while (cursor !== null);
    };
    const telegram = '@synced_lead';
    const id = await submitLead(server, { telegram });
    server.clock.advance(MIN);
    const status = server.app.get(LeadStatusService);
    expect((await status.set({ leadId: id, expected: 'new', to: 'in_progress', by: { telegramUserId: 1, name: 'm' } })).kind).toBe(
      'changed',
    );
    await sync();
    expect(have.get(id)).toMatchObject({ status: 'in_progress', repeats: 0 });
    // A repeat whose time was taken a moment before the status change committed (its batch, or an instance whose clock is
    // a millisecond behind): its time is not after the lead's updated_at.
    server.clock.advance(-1);
    expect((await postLead(server, lead({ telegram, comment: 'again' }))).status).toBe(200);
    await sync();
    expect(have.get(id)).toMatchObject({ status: 'in_progress', repeats: 1 });
    // And a change at the very millisecond of the last one.
    server.clock.advance(1);
    expect((await status.set({ leadId: id, expected: 'in_progress', to: 'won', by: { telegramUserId: 1, name: 'm' } })).kind).toBe(
      'changed',
    );
    await sync();
    expect(have.get(id)).toMatchObject({ status: 'won', repeats: 1 });
  });

  it('the CSV gives a lead that changes while it streams again, in a later row with its new state', async () => {
    const server = await boot({ sandbox: undefined });
    const since = String(server.clock.now());
    const numbers: number[] = [];
    // More than a page of the CSV (200 rows).
    for (let i = 0; i < 201; i += 1) numbers.push(await submitLead(server));
    server.clock.advance(MIN);
    const pages = server.app.get(LeadPagesRepository);
    const read = pages.exportPage.bind(pages);
    const status = server.app.get(LeadStatusService);
    let reads = 0;
    // The first lead changes once the first page is read, before the second.
    jest.spyOn(pages, 'exportPage').mockImplementation(async (q) => {
      const rows = await read(q);
      reads += 1;
      if (reads === 1) {
        const changed = await status.set({ leadId: numbers[0], expected: 'new', to: 'in_progress', by: { telegramUserId: 1, name: 'm' } });
        expect(changed.kind).toBe('changed');
      }
      return rows;
    });
    const csv = await get(server, `/leads/export.csv?updated_since=${since}`);
    expect(csv.status).toBe(200);
    const rows = csv.text
      .trim()
      .split('\r\n')
      .slice(1)
      .map((row) => row.split(','));
    const statusAt = CSV_COLUMNS.indexOf('status');
    expect(rows.map((row) => Number(row[0]))).toEqual([...numbers, numbers[0]]);
    expect([rows[0][statusAt], rows[rows.length - 1][statusAt]]).toEqual(['new', 'in_progress']);
  });

  it('refuses a time that is no time, and a cursor of the other order, as 422 invalid_query', async () => {
    const server = await boot({ sandbox: undefined });
    await submitLead(server);
    await submitLead(server);
    const rule = 'must be an ISO 8601 date or time that exists (no 30 February, no 24:00), or milliseconds since the epoch';
    for (const bad of ['yesterday', '2026-02-30', '2026-11-29T24:00:00Z'])
      for (const route of ['/leads', '/leads/export.csv'])
        expect(await get(server, `${route}?updated_since=${encodeURIComponent(bad)}`)).toMatchObject({
          status: 422,
          body: { error: 'invalid_query', errors: { updated_since: rule } },
        });
    const byNumber = (await get(server, '/leads?limit=1')).body.next_cursor as string;
    const byChange = (await get(server, '/leads?limit=1&updated_since=0')).body.next_cursor as string;
    const refused = { status: 422, body: { error: 'invalid_query', errors: { cursor: 'is not a cursor this API gave' } } };
    expect(await get(server, `/leads?updated_since=0&cursor=${byNumber}`)).toMatchObject(refused);
    expect(await get(server, `/leads?cursor=${byChange}`)).toMatchObject(refused);
  });
});
