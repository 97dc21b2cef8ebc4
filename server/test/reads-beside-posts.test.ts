/**
 * Heavy reads beside POST /leads, against the real app on both databases. On SQLite a query runs synchronously, so a
 * read that is long, or many at once, held every other request until they were all done:
 * - an export of many leads gives the event loop a turn between its pages, so a POST /leads sent while it runs is
 *   answered before it ends; at most EXPORTS_AT_ONCE exports read at once, the others waiting their turn;
 * - the inbox's searches, which read the whole table when they match little, read one at a time, each after a turn
 *   of the event loop, so a POST /leads sent beside many of them is answered before the last of them.
 */
import { ExportService, EXPORTS_AT_ONCE } from '../src/export/export.service';
import { lead, postLead, sandboxSuite, waitFor, type TestServer } from './harness';
import { sqlRun } from './support/test-database';

const suite = sandboxSuite();
/** The app without Telegram on a fresh database file, with no rate limit a test reaches. */
const boot = () => suite.boot({ sandbox: undefined });

/** `count` published leads written straight into the database (one statement, both databases). */
async function manyLeads(server: TestServer, count: number): Promise<void> {
  const now = server.clock.now();
  await sqlRun(
    server.db,
    `insert into leads (request_id, name, telegram, telegram_key, phone, status, created_at, received_at, published_at, chat_id, message_id)
     with recursive seq(i) as (select 1 union all select i + 1 from seq where i < ${count})
     select 'bulk-' || i, 'Анна Ким', '@bulk_lead', 'bulk_lead', '+79990000000', 'new', ${now}, ${now}, ${now}, '-1001000000001', i from seq`,
  );
}

const unfiltered = {};

describe('the CSV export beside POST /leads', () => {
  it('answers a POST /leads sent while an export of many leads runs before the export ends', async () => {
    const server = await boot();
    const leads = 20_000;
    await manyLeads(server, leads);
    const exports = server.app.get(ExportService);

    let rows = 0;
    let exportEnded = false;
    let answer: Promise<{ status: number; exportEndedFirst: boolean }> | null = null;
    for await (const part of exports.csv(unfiltered)) {
      rows += 1;
      // The export is under way (its first row out): a lead is posted beside it.
      if (rows === 2) answer = postLead(server, lead()).then((res) => ({ status: res.status, exportEndedFirst: exportEnded }));
      expect(typeof part).toBe('string');
    }
    exportEnded = true;
    expect(rows).toBe(leads + 1);
    expect(await answer).toEqual({ status: 201, exportEndedFirst: false });
  });

  it(`lets ${EXPORTS_AT_ONCE} exports read at once; another waits for a turn before its first row, and gets it when one ends`, async () => {
    const server = await boot();
    await manyLeads(server, 500);
    const exports = server.app.get(ExportService);
    const running = Array.from({ length: EXPORTS_AT_ONCE }, () => exports.csv(unfiltered));
    for (const csv of running) expect((await csv.next()).value).toMatch(/^\uFEFFnumber,/);

    const waiting = exports.csv(unfiltered);
    let started = false;
    const first = waiting.next().then((r) => {
      started = true;
      return r;
    });
    await waitFor(() => exports.exportTurns.state.waiting === 1, 5000, 'the export to wait for a turn');
    expect([started, exports.exportTurns.state]).toEqual([false, { held: EXPORTS_AT_ONCE, waiting: 1 }]);

    // One export is given up (its client went away): its turn passes to the one waiting.
    await running[0].return(undefined);
    expect((await first).value).toMatch(/^\uFEFFnumber,/);
    expect(exports.exportTurns.state).toEqual({ held: EXPORTS_AT_ONCE, waiting: 0 });

    // Read to the end, each gives its turn back.
    let rows = 0;
    for await (const part of waiting) if (part) rows += 1;
    expect(rows).toBe(500);
    await running[1].return(undefined);
    expect(exports.exportTurns.state).toEqual({ held: 0, waiting: 0 });
  });
});

describe("the inbox's searches beside POST /leads", () => {
  it('answers a POST /leads sent beside many searches that match nothing before the last of them', async () => {
    const server = await boot();
    await manyLeads(server, 20_000);
    const exports = server.app.get(ExportService);
    const searches = 50;
    let answered = 0;
    const all = Array.from({ length: searches }, () =>
      exports.page({ q: 'нет такого' }).then((page) => {
        answered += 1;
        return page.leads.length;
      }),
    );
    const post = await postLead(server, lead());
    const answeredBeforePost = answered;
    expect(await Promise.all(all)).toEqual(new Array(searches).fill(0));
    expect([post.status, answeredBeforePost < searches]).toEqual([201, true]);
    expect(exports.searchTurns.state).toEqual({ held: 0, waiting: 0 });
  });
});
