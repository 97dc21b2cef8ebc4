/**
 * The inbox's API (`/inbox/api/*`) against the real app, its database and the Telegram sandbox: launch data signed by
 * the sandbox as Telegram signs it, membership asked of the sandbox with getChatMember, the card rewritten there.
 */
import { DEFAULT_USER, signInitData, type SandboxUser } from '@stickers/telegram-sandbox';
import request from 'supertest';
import { LEADS_CHAT, NO_RATE_LIMITS, sandboxSuite, submitLead, tempDir, startServer, waitFor, type TestServer } from './harness';
import { sqlRows } from './support/test-database';
import { join } from 'node:path';
import { ru } from '../src/i18n/ru';

const { tmp, sandbox, start } = sandboxSuite();
const STRANGER: SandboxUser = { id: 777, is_bot: false, first_name: 'Чужой' };
const MEMBER: SandboxUser = { id: 502, is_bot: false, first_name: 'Пётр', username: 'petr_member' };
let n = 0;
const dbPath = () => join(tmp.dir, `inbox-${(n += 1)}.sqlite`);

interface Answer {
  status: number;
  body: any;
  text: string;
  headers: Record<string, string>;
}

/** Launch data for `user`, signed now (by the server's clock) with the sandbox's token unless told otherwise. */
function launch(server: TestServer, user: SandboxUser = DEFAULT_USER, o: { token?: string; ageSec?: number } = {}): string {
  return signInitData({ botToken: o.token ?? sandbox.token, user, authDate: Math.floor(server.clock.now() / 1000) - (o.ageSec ?? 0) });
}

async function call(
  server: TestServer,
  path: string,
  o: { auth?: string | null; initData?: string; method?: string; body?: unknown } = {},
): Promise<Answer> {
  const auth = o.auth !== undefined ? o.auth : `tma ${o.initData ?? launch(server)}`;
  const http = request(server.app.getHttpServer());
  const url = `/inbox/api/${path}`;
  const method = o.method ?? 'GET';
  if (method !== 'GET' && method !== 'POST') throw new Error(`call: no ${method} route in the inbox API`);
  const test = method === 'POST' ? http.post(url) : http.get(url);
  if (auth !== null) test.set('Authorization', auth);
  if (o.body !== undefined) test.set('Content-Type', 'application/json').send(JSON.stringify(o.body));
  const res = await test;
  const { text } = res;
  let body: unknown = null;
  try {
    body = JSON.parse(text);
  } catch {
    /* CSV */
  }
  return { status: res.status, body, text, headers: res.headers };
}

const startInbox = (env: Record<string, string> = {}) => start({ dbPath: dbPath(), env: { ...NO_RATE_LIMITS, ...env } });

describe('who may enter', () => {
  it('answers 401 for missing, forged and stale launch data, each with Cache-Control: no-store', async () => {
    const server = await startInbox();
    const missing = await call(server, 'me', { auth: null });
    expect([missing.status, missing.body]).toEqual([401, { error: 'unauthorized', why: 'missing' }]);
    const notTma = await call(server, 'me', { auth: `Bearer ${launch(server)}` });
    expect([notTma.status, notTma.body]).toEqual([401, { error: 'unauthorized', why: 'missing' }]);

    const otherToken = await call(server, 'me', { initData: launch(server, DEFAULT_USER, { token: '123456789:another-bot' }) });
    expect([otherToken.status, otherToken.body]).toEqual([401, { error: 'unauthorized', why: 'invalid' }]);
    // A signed launch with the user swapped for another: the signature no longer matches.
    const tampered = new URLSearchParams(launch(server, STRANGER));
    tampered.set('user', JSON.stringify({ id: DEFAULT_USER.id, first_name: 'Мария' }));
    const forged = await call(server, 'me', { initData: tampered.toString() });
    expect([forged.status, forged.body]).toEqual([401, { error: 'unauthorized', why: 'invalid' }]);

    const stale = await call(server, 'me', { initData: launch(server, DEFAULT_USER, { ageSec: 3601 }) });
    expect([stale.status, stale.body]).toEqual([401, { error: 'unauthorized', why: 'expired' }]);
    const fresh = await call(server, 'me', { initData: launch(server, DEFAULT_USER, { ageSec: 3500 }) });
    expect(fresh.status).toBe(200);
    for (const a of [missing, notTma, otherToken, forged, stale, fresh]) expect(a.headers['cache-control']).toBe('no-store');
  });

  it('LEADS_INBOX_MAX_AGE_S sets how old launch data may be', async () => {
    const server = await startInbox({ LEADS_INBOX_MAX_AGE_S: '60' });
    expect((await call(server, 'me', { initData: launch(server, DEFAULT_USER, { ageSec: 61 }) })).body.why).toBe('expired');
    expect((await call(server, 'me', { initData: launch(server, DEFAULT_USER, { ageSec: 59 }) })).status).toBe(200);
  });

  it('answers 403 to a valid user who is neither a manager nor a member; a member and a listed manager get in', async () => {
    sandbox.state.setMember(LEADS_CHAT, MEMBER, 'member');
    const server = await startInbox();
    const stranger = await call(server, 'me', { initData: launch(server, STRANGER) });
    expect([stranger.status, stranger.body]).toEqual([403, { error: 'forbidden' }]);
    expect(stranger.headers['cache-control']).toBe('no-store');

    // Without LEADS_MANAGER_IDS the leads chat's administrators (here its creator) are the managers.
    const creator = await call(server, 'me');
    expect(creator.body).toEqual({
      user: { id: DEFAULT_USER.id, first_name: 'Мария', last_name: 'Менеджер', username: 'maria_manager' },
      manager: true,
      may_change: true,
      locale: 'ru',
      timezone: 'Europe/Moscow',
      card_pii: true,
      // The card's words of the server's catalogue, which the page shows as the cards do.
      words: { statuses: ru.statuses, buttons: ru.buttons, fields: ru.card.fields, media: ru.group.media },
    });
    const member = await call(server, 'me', { initData: launch(server, MEMBER) });
    expect([member.status, member.body.manager, member.body.may_change, member.body.user.last_name]).toEqual([200, false, true, null]);
  });

  it('with LEADS_MANAGER_IDS: a listed user is a manager without being a member; an administrator not listed is not', async () => {
    const server = await startInbox({ LEADS_MANAGER_IDS: String(STRANGER.id) });
    const listed = await call(server, 'me', { initData: launch(server, STRANGER) });
    expect([listed.status, listed.body.manager, listed.body.may_change]).toEqual([200, true, true]);
    const creator = await call(server, 'me');
    expect([creator.status, creator.body.manager, creator.body.may_change]).toEqual([200, false, false]);
  });

  it('trusts a getChatMember answer for LEADS_INBOX_MEMBER_CACHE_S, then asks again', async () => {
    sandbox.state.setMember(LEADS_CHAT, MEMBER, 'member');
    const server = await startInbox({ LEADS_INBOX_MEMBER_CACHE_S: '60' });
    expect((await call(server, 'me', { initData: launch(server, MEMBER) })).status).toBe(200);
    sandbox.state.setMember(LEADS_CHAT, MEMBER, 'left');
    expect((await call(server, 'me', { initData: launch(server, MEMBER) })).status).toBe(200);
    server.clock.advance(61_000);
    expect((await call(server, 'me', { initData: launch(server, MEMBER) })).status).toBe(403);
  });

  it('answers 503 inbox_unavailable without a bot token', async () => {
    const dir = tempDir();
    const server = await startServer({ dbPath: join(dir.dir, 'no-bot.sqlite') });
    try {
      const res = await call(server, 'me');
      expect([res.status, res.body]).toEqual([503, { error: 'inbox_unavailable' }]);
      expect(res.headers['cache-control']).toBe('no-store');
    } finally {
      await server.close();
      dir.remove();
    }
  });
});

describe('the leads', () => {
  it('lists newest first with the paging of GET /leads, filters by status and source, and searches', async () => {
    const server = await startInbox();
    const a = await submitLead(server, { name: 'Анна Ким', telegram: '@anna_inbox', phone: '+79991112233' });
    const b = await submitLead(server, {
      name: 'Борис Ли',
      telegram: '@boris_inbox',
      phone: '+79994445566',
      source: { landing: 'wedding' },
    });
    const c = await submitLead(server, {
      name: 'Carl Old',
      telegram: '@carl_inbox',
      phone: '+79997778899',
      source: { landing: 'corporate' },
    });

    const first = await call(server, 'leads?limit=2');
    expect(first.status).toBe(200);
    expect(first.headers['cache-control']).toBe('no-store');
    expect(first.body.leads.map((l: any) => l.lead_number)).toEqual([c, b]);
    const second = await call(server, `leads?limit=2&cursor=${first.body.next_cursor}`);
    expect(second.body).toMatchObject({ leads: [{ lead_number: a, name: 'Анна Ким' }], next_cursor: null });

    const numbers = async (query: string) => ((await call(server, `leads?${query}`)).body.leads as any[]).map((l) => l.lead_number);
    expect(await numbers('source=wedding')).toEqual([b]);
    expect(await numbers('source=none')).toEqual([a]);
    expect(await numbers('status=new')).toEqual([c, b, a]);
    expect(await numbers('status=won')).toEqual([]);
    expect(await numbers(`q=${encodeURIComponent(`#${b}`)}`)).toEqual([b]);
    expect(await numbers(`q=${encodeURIComponent(`№${a}`)}`)).toEqual([a]);
    expect(await numbers(`q=${encodeURIComponent('анна')}`)).toEqual([a]);
    expect(await numbers(`q=${encodeURIComponent('КИМ')}`)).toEqual([a]);
    expect(await numbers('q=carl')).toEqual([c]);
    expect(await numbers(`q=${encodeURIComponent('@BORIS_in')}`)).toEqual([b]);
    expect(await numbers(`q=${encodeURIComponent('+7 999 444')}`)).toEqual([b]);
    expect(await numbers('q=7778899')).toEqual([c]);
    // LIKE's own characters match themselves only.
    expect(await numbers(`q=${encodeURIComponent('%')}`)).toEqual([]);
    // A regular expression's own characters are only characters.
    for (const q of ['.*', 'a.', '[к]', '(', '\\']) expect(await numbers(`q=${encodeURIComponent(q)}`)).toEqual([]);

    const bad = await call(server, 'leads?status=maybe&source=%20x&limit=0');
    expect(bad.status).toBe(422);
    expect(bad.body.error).toBe('invalid_query');
    expect(Object.keys(bad.body.errors).sort()).toEqual(['limit', 'source', 'status']);
  });

  it("shows a lead's page: its fields, repeats, status history, events and its card's link; 404 for none", async () => {
    const server = await startInbox();
    const number = await submitLead(server, { telegram: '@page_inbox', phone: '+79990001122' });
    await submitLead(server, { telegram: '@page_inbox', phone: '+79990001122', comment: 'Ещё раз' });
    const changed = await call(server, `leads/${number}/status`, { method: 'POST', body: { status: 'in_progress', expected: 'new' } });
    expect(changed.status).toBe(200);

    const page = await call(server, `leads/${number}`);
    expect(page.status).toBe(200);
    expect(page.body.lead).toMatchObject({ lead_number: number, telegram: '@page_inbox', status: 'in_progress', repeats: 1 });
    expect(page.body.repeats).toHaveLength(1);
    expect(page.body.history).toEqual([{ status: 'in_progress', from: 'new', by: 'Мария Менеджер', at: expect.any(String) }]);
    expect(page.body.events.map((e: any) => e.kind)).toContain('published');
    // The card rewritten after the change is the trace's to tell, not the manager's list.
    await waitFor(
      async () => (await sqlRows(server.db, "select 1 from lead_events where lead_id = ? and kind = 'card_rewritten'", number)).length,
    );
    expect((await call(server, `leads/${number}`)).body.events.map((e: any) => e.kind)).not.toContain('card_rewritten');
    const card = sandbox.messages(LEADS_CHAT).find((m) => m.text.includes(`#${number}`))!;
    expect(page.body.card_url).toBe(`https://t.me/c/${String(LEADS_CHAT).slice(4)}/${card.message_id}`);

    expect((await call(server, 'leads/999999')).body).toEqual({ error: 'not_found' });
    expect((await call(server, 'leads/abc')).status).toBe(404);
  });

  it("links the card under LEADS_TELEGRAM_LINK_ROOT: in development the sandbox's stand-in for t.me shows that card", async () => {
    const server = await startInbox({ LEADS_TELEGRAM_LINK_ROOT: `${sandbox.url}/sandbox/t.me` });
    const number = await submitLead(server, { telegram: '@root_inbox' });
    const card = sandbox.messages(LEADS_CHAT).find((m) => m.text.includes(`#${number}`))!;
    const url = (await call(server, `leads/${number}`)).body.card_url as string;
    expect(url).toBe(`${sandbox.url}/sandbox/t.me/c/${String(LEADS_CHAT).slice(4)}/${card.message_id}`);
    const opened = await fetch(url, { redirect: 'manual' });
    expect(opened.headers.get('location')).toBe(`/?chat=${LEADS_CHAT}&message=${card.message_id}`);
  });

  it('hides personal values where LEADS_CARD_PII=0 hides them on the card', async () => {
    const server = await startInbox({ LEADS_CARD_PII: '0' });
    const number = await submitLead(server, { name: 'Скрытая', telegram: '@hidden_inbox' });
    const list = await call(server, 'leads');
    expect(list.body.leads[0]).toMatchObject({ lead_number: number, name: null, telegram: null, phone: null, status: 'new' });
    expect((await call(server, `leads/${number}`)).body.lead.name).toBeNull();
    expect((await call(server, 'me')).body.card_pii).toBe(false);
    expect((await call(server, 'leads.csv')).text).not.toContain('hidden_inbox');
  });

  it('gives the CSV of the current filter as an attachment', async () => {
    const server = await startInbox();
    await submitLead(server, { telegram: '@csv_one_inbox' });
    await submitLead(server, { telegram: '@csv_two_inbox', source: { landing: 'wedding' } });
    const csv = await call(server, 'leads.csv?source=wedding');
    expect(csv.status).toBe(200);
    expect(csv.headers['content-disposition']).toBe('attachment; filename="leads.csv"');
    expect(csv.headers['content-type']).toMatch(/^text\/csv/);
    expect(csv.headers['cache-control']).toBe('no-store');
    expect(csv.text).toContain('@csv_two_inbox');
    expect(csv.text).not.toContain('@csv_one_inbox');
    expect(csv.text.split('\r\n')[0]).toMatch(/^\uFEFF?number,created_at,/);
    expect((await call(server, 'leads.csv?status=maybe')).status).toBe(422);
  });
});

describe('changes', () => {
  it("names a manager without a name or username in the locale's words (LEADS_LOCALE=en: 'no name')", async () => {
    const NAMELESS: SandboxUser = { id: 778, is_bot: false, first_name: '' };
    const server = await startInbox({ LEADS_LOCALE: 'en', LEADS_MANAGER_IDS: String(NAMELESS.id) });
    const number = await submitLead(server);
    const res = await call(server, `leads/${number}/status`, {
      method: 'POST',
      body: { status: 'in_progress', expected: 'new' },
      initData: launch(server, NAMELESS),
    });
    expect([res.status, res.body.lead?.status_changed_by]).toEqual([200, 'no name']);
  });

  it('changes a status as a card button does: the card in the sandbox is rewritten; 409 on a stale expected; 422 for an unknown status', async () => {
    const server = await startInbox();
    const number = await submitLead(server);
    const card = () => sandbox.messages(LEADS_CHAT).find((m) => m.text.includes(`#${number}`))!;
    expect(card().text).toContain('Новая');

    const res = await call(server, `leads/${number}/status`, { method: 'POST', body: { status: 'in_progress', expected: 'new' } });
    expect(res.status).toBe(200);
    expect(res.body.lead).toMatchObject({ lead_number: number, status: 'in_progress', status_changed_by: 'Мария Менеджер' });
    expect(card().text).toContain('В работе');
    expect(
      card()
        .reply_markup?.inline_keyboard.flat()
        .map((b) => b.text),
    ).toContain('Заказ');

    const stale = await call(server, `leads/${number}/status`, { method: 'POST', body: { status: 'spam', expected: 'new' } });
    expect([stale.status, stale.body]).toEqual([409, { error: 'conflict', status: 'in_progress' }]);
    const unknown = await call(server, `leads/${number}/status`, { method: 'POST', body: { status: 'done', expected: 'in_progress' } });
    expect([unknown.status, unknown.body.error, Object.keys(unknown.body.errors)]).toEqual([422, 'invalid_body', ['status']]);
    const notOffered = await call(server, `leads/${number}/status`, { method: 'POST', body: { status: 'new', expected: 'in_progress' } });
    expect(notOffered.body).toEqual({
      error: 'invalid_body',
      errors: { status: expect.stringMatching(/^cannot change from in_progress to new; allowed: \w+/) },
    });
    const tooLarge = await call(server, `leads/${number}/status`, {
      method: 'POST',
      body: { status: 'x'.repeat(17_000), expected: 'new' },
    });
    expect([tooLarge.status, tooLarge.body, tooLarge.headers.connection]).toEqual([413, { error: 'payload_too_large' }, 'close']);
    expect((await call(server, `leads/999999/status`, { method: 'POST', body: { status: 'spam', expected: 'new' } })).status).toBe(404);
  });

  it("with LEADS_MANAGER_IDS, a member who is not listed may look but not change a status (the buttons' rule)", async () => {
    sandbox.state.setMember(LEADS_CHAT, MEMBER, 'member');
    const server = await startInbox({ LEADS_MANAGER_IDS: '1' });
    const number = await submitLead(server);
    const asMember = { initData: launch(server, MEMBER), method: 'POST', body: { status: 'in_progress', expected: 'new' } };
    expect((await call(server, 'me', { initData: launch(server, MEMBER) })).body.may_change).toBe(false);
    expect((await call(server, `leads/${number}/status`, asMember)).body).toEqual({ error: 'forbidden' });
    expect((await call(server, 'leads', { initData: launch(server, MEMBER) })).status).toBe(200);
  });

  it('erases for managers only, confirmed; the card is rewritten without personal data', async () => {
    sandbox.state.setMember(LEADS_CHAT, MEMBER, 'member');
    const server = await startInbox();
    const number = await submitLead(server, { name: 'Стереть Меня', telegram: '@erase_inbox' });
    const byMember = await call(server, `leads/${number}/erase`, {
      initData: launch(server, MEMBER),
      method: 'POST',
      body: { confirm: true },
    });
    expect([byMember.status, byMember.body]).toEqual([403, { error: 'forbidden' }]);
    const unconfirmed = await call(server, `leads/${number}/erase`, { method: 'POST', body: {} });
    expect(unconfirmed.status).toBe(422);

    const erased = await call(server, `leads/${number}/erase`, { method: 'POST', body: { confirm: true } });
    expect(erased.status).toBe(200);
    expect(erased.body.lead).toMatchObject({ lead_number: number, name: null, telegram: null, anonymised_at: expect.any(String) });
    const card = sandbox.messages(LEADS_CHAT).find((m) => m.text.includes(`#${number}`))!;
    expect(card.text).not.toContain('erase_inbox');
    expect((await call(server, `leads/999999/erase`, { method: 'POST', body: { confirm: true } })).status).toBe(404);
  });
});
