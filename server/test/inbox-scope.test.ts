/**
 * Whose leads an inbox viewer sees and acts on, against the real app and the sandbox on both databases: with
 * LEADS_ROUTES, a member of one route's chat sees the leads whose card went there (and those not yet published that
 * the routes send there) — in the list, a lead's page, the CSV and the charts — and cannot read, change or erase any
 * other (404, as for no such lead); a user in LEADS_MANAGER_IDS sees every lead.
 */
import { join } from 'node:path';
import type { SandboxUser } from '@stickers/telegram-sandbox';
import { LEADS_CHAT, NO_RATE_LIMITS, lead, postLead, sandboxSuite, submitLead, type TestServer } from './harness';
import { inboxCall } from './support/inbox-client';

const WEDDING = -1001000000011;
const CORPORATE = -1001000000012;
const ROUTES = { LEADS_ROUTES: `wedding=${WEDDING},corporate=${CORPORATE}` };
const WEDDING_MEMBER: SandboxUser = { id: 601, is_bot: false, first_name: 'Вера', username: 'vera_wedding' };
const MAIN_MEMBER: SandboxUser = { id: 602, is_bot: false, first_name: 'Глеб', username: 'gleb_main' };
const LISTED: SandboxUser = { id: 603, is_bot: false, first_name: 'Дина' };

const { tmp, sandbox, start } = sandboxSuite((s) => {
  s.state.addChat({ id: WEDDING, type: 'supergroup', title: 'Свадьбы' });
  s.state.addChat({ id: CORPORATE, type: 'supergroup', title: 'Корпоративы' });
});
let n = 0;
const dbPath = () => join(tmp.dir, `inbox-scope-${(n += 1)}.sqlite`);

function members(): void {
  sandbox.state.setMember(WEDDING, WEDDING_MEMBER, 'member');
  sandbox.state.setMember(LEADS_CHAT, MAIN_MEMBER, 'member');
}

/** A lead stored while Telegram refuses every card: it has no card (no chat) yet. */
async function unpublished(server: TestServer, overrides: Record<string, unknown>): Promise<number> {
  sandbox.inject({ method: 'sendMessage', kind: 'server_error', count: 1000 });
  const res = await postLead(server, lead(overrides));
  expect(res.status).toBe(201);
  await server.outbox.whenIdle();
  sandbox.clearFaults();
  return res.body.lead_number as number;
}

const numbersOf = (answer: { body: any }) => (answer.body.leads as any[]).map((l) => l.lead_number).sort((a, b) => a - b);
const csvNumbers = (text: string) =>
  text
    .split('\r\n')
    .slice(1)
    .filter((row) => row !== '')
    .map((row) => Number(row.split(',')[0]))
    .sort((a, b) => a - b);
const chartTotal = (body: any) => (body.per_day as { counts: number[] }[]).flatMap((s) => s.counts).reduce((a, b) => a + b, 0);

describe('whose leads a viewer sees', () => {
  it("a member of one route's chat sees and acts on that chat's leads only; the main chat's member those of the main chat", async () => {
    members();
    // A wedding lead whose card went to the main chat before the routes were set: its card's chat decides.
    const path = dbPath();
    const before = await start({ dbPath: path, env: NO_RATE_LIMITS });
    const earlyWedding = await submitLead(before, { source: { landing: 'wedding' } });
    await before.close();

    const server = await start({ dbPath: path, env: { ...NO_RATE_LIMITS, ...ROUTES } });
    const main = await submitLead(server);
    const wedding = await submitLead(server, { name: 'Свадебная Анна', source: { landing: 'wedding' } });
    const corporate = await submitLead(server, { name: 'Корпоративный Борис', source: { landing: 'corporate' } });
    const other = await submitLead(server, { source: { landing: 'promo' } });
    // Not published yet: the route of the source (any case) names the chat.
    const waitingWedding = await unpublished(server, { source: { landing: 'WEDDING' } });
    const waitingMain = await unpublished(server, {});
    const waitingCorporate = await unpublished(server, { source: { landing: 'corporate' } });
    expect(sandbox.messages(WEDDING).some((m) => m.text.includes(`#${wedding}\n`))).toBe(true);

    const asWedding = { user: WEDDING_MEMBER };
    const asMain = { user: MAIN_MEMBER };
    expect(numbersOf(await inboxCall(server, sandbox, 'leads', asWedding))).toEqual([wedding, waitingWedding]);
    expect(numbersOf(await inboxCall(server, sandbox, 'leads', asMain))).toEqual([earlyWedding, main, other, waitingMain]);
    // The creator of every chat sees every lead.
    expect(numbersOf(await inboxCall(server, sandbox, 'leads'))).toEqual(
      [earlyWedding, main, wedding, corporate, other, waitingWedding, waitingMain, waitingCorporate].sort((a, b) => a - b),
    );
    // Filters and the search stay within the scope.
    expect(numbersOf(await inboxCall(server, sandbox, `leads?q=${encodeURIComponent('Борис')}`, asWedding))).toEqual([]);
    expect(numbersOf(await inboxCall(server, sandbox, `leads?q=${encodeURIComponent(`#${corporate}`)}`, asWedding))).toEqual([]);
    expect(numbersOf(await inboxCall(server, sandbox, 'leads?source=corporate', asWedding))).toEqual([]);
    expect(numbersOf(await inboxCall(server, sandbox, 'leads?source=wedding', asMain))).toEqual([earlyWedding]);

    // The CSV and the charts: the same leads.
    expect(csvNumbers((await inboxCall(server, sandbox, 'leads.csv', asWedding)).text)).toEqual([wedding, waitingWedding]);
    expect(csvNumbers((await inboxCall(server, sandbox, 'leads.csv', asMain)).text)).toEqual([earlyWedding, main, other, waitingMain]);
    const weddingCharts = (await inboxCall(server, sandbox, 'charts', asWedding)).body;
    expect(chartTotal(weddingCharts)).toBe(2);
    expect(weddingCharts.funnel.new).toBe(2);
    expect(chartTotal((await inboxCall(server, sandbox, 'charts', asMain)).body)).toBe(4);
    expect(chartTotal((await inboxCall(server, sandbox, 'charts')).body)).toBe(8);

    // Another chat's lead: no page, no status change, as for a lead that does not exist.
    for (const number of [corporate, main, waitingCorporate]) {
      expect((await inboxCall(server, sandbox, `leads/${number}`, asWedding)).body).toEqual({ error: 'not_found' });
      const change = await inboxCall(server, sandbox, `leads/${number}/status`, {
        ...asWedding,
        method: 'POST',
        body: { status: 'spam', expected: 'new' },
      });
      expect([number, change.status, change.body]).toEqual([number, 404, { error: 'not_found' }]);
    }
    expect((await inboxCall(server, sandbox, `leads/${corporate}`)).body.lead.status).toBe('new');
    expect((await inboxCall(server, sandbox, `leads/${main}`)).body.lead.status).toBe('new');

    // Its own: read and changed.
    expect((await inboxCall(server, sandbox, `leads/${wedding}`, asWedding)).body.lead.name).toBe('Свадебная Анна');
    const changed = await inboxCall(server, sandbox, `leads/${wedding}/status`, {
      ...asWedding,
      method: 'POST',
      body: { status: 'in_progress', expected: 'new' },
    });
    expect([changed.status, changed.body.lead.status]).toEqual([200, 'in_progress']);
  });

  it("an administrator of the main chat (a manager without LEADS_MANAGER_IDS) erases only that chat's leads", async () => {
    sandbox.state.setMember(LEADS_CHAT, MAIN_MEMBER, 'administrator');
    const server = await start({ dbPath: dbPath(), env: { ...NO_RATE_LIMITS, ...ROUTES } });
    const main = await submitLead(server);
    const corporate = await submitLead(server, { name: 'Корпоративный Борис', source: { landing: 'corporate' } });
    const asAdmin = { user: MAIN_MEMBER, method: 'POST', body: { confirm: true } };
    expect((await inboxCall(server, sandbox, 'me', { user: MAIN_MEMBER })).body.manager).toBe(true);
    const refused = await inboxCall(server, sandbox, `leads/${corporate}/erase`, asAdmin);
    expect([refused.status, refused.body]).toEqual([404, { error: 'not_found' }]);
    expect((await inboxCall(server, sandbox, `leads/${corporate}`)).body.lead).toMatchObject({
      name: 'Корпоративный Борис',
      anonymised_at: null,
    });
    expect((await inboxCall(server, sandbox, `leads/${main}/erase`, asAdmin)).status).toBe(200);
  });

  it('a user in LEADS_MANAGER_IDS sees every lead, without being a member of any chat', async () => {
    members();
    const server = await start({ dbPath: dbPath(), env: { ...NO_RATE_LIMITS, ...ROUTES, LEADS_MANAGER_IDS: String(LISTED.id) } });
    const all = [
      await submitLead(server),
      await submitLead(server, { source: { landing: 'wedding' } }),
      await submitLead(server, { source: { landing: 'corporate' } }),
    ];
    expect(numbersOf(await inboxCall(server, sandbox, 'leads', { user: LISTED }))).toEqual(all);
    expect(csvNumbers((await inboxCall(server, sandbox, 'leads.csv', { user: LISTED })).text)).toEqual(all);
    expect(chartTotal((await inboxCall(server, sandbox, 'charts', { user: LISTED })).body)).toBe(3);
    const erased = await inboxCall(server, sandbox, `leads/${all[2]}/erase`, { user: LISTED, method: 'POST', body: { confirm: true } });
    expect(erased.status).toBe(200);
    // A member of a route's chat who is not listed still sees only that chat's leads.
    expect(numbersOf(await inboxCall(server, sandbox, 'leads', { user: WEDDING_MEMBER }))).toEqual([all[1]]);
  });
});
