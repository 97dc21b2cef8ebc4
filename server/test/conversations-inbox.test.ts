/**
 * The conversation in the inbox's API: `GET /inbox/api/leads/:number/messages` (the history, the bound visitor, personal
 * data hidden as the inbox hides it, whether they sent `/stop`), `POST` (a message to the visitor through the outbox: 202, 409 `not_bound`,
 * 403 for who may not change the status, 422 for a bad text), and the list's count of the visitor's messages waiting for an answer. Against the sandbox, on both databases.
 */
import { DEFAULT_USER, type SandboxUser } from '@stickers/telegram-sandbox';
import { LEADS_CHAT, lead, memberActions, postLead, sandboxSuite, waitFor, type TestServer } from './harness';
import { inboxCall } from './support/inbox-client';

const VISITOR: SandboxUser = { id: 7001, is_bot: false, first_name: 'Анна', last_name: 'Ким', username: 'anna_k' };
const MEMBER: SandboxUser = { id: 502, is_bot: false, first_name: 'Пётр', username: 'petr_member' };
const LINK = /^https:\/\/t\.me\/stickers_leads_bot\?start=([A-Za-z0-9_-]{1,64})$/;

const { sandbox, boot } = sandboxSuite((s) => s.state.addChat({ id: VISITOR.id, type: 'private', title: 'Анна' }));

async function settled(server: TestServer): Promise<void> {
  await server.outbox.tick();
  await server.outbox.whenIdle();
}

async function newLead(server: TestServer, bind: boolean): Promise<number> {
  const created = await postLead(server, lead({ telegram: '@anna_k' }));
  await settled(server);
  if (bind) {
    const payload = LINK.exec(String(created.body.telegram_link))![1];
    await memberActions(sandbox).command(VISITOR.id, `/start ${payload}`, VISITOR);
  }
  return created.body.lead_number as number;
}

/** Waits until the app stored `n` messages (the bot handles updates as they come). */
function waitStored(server: TestServer, n: number) {
  return waitFor(
    async () => (await server.db.db.selectFrom('lead_messages').select('id').execute()).length >= n,
    10_000,
    `${n} messages stored`,
  );
}

describe('GET and POST /inbox/api/leads/:number/messages', () => {
  it('the history with the bound visitor; a message sent to the visitor (202), delivered through the outbox', async () => {
    const server = await boot({ polling: true });
    const leadNumber = await newLead(server, true);
    sandbox.say(VISITOR.id, 'Здравствуйте!', VISITOR);
    await waitStored(server, 1);
    await settled(server);

    const sent = await inboxCall(server, sandbox, `leads/${leadNumber}/messages`, { method: 'POST', body: { text: 'Добрый день, Анна' } });
    expect(sent.status).toBe(202);
    expect(sent.body).toEqual({
      message: {
        id: expect.any(Number),
        direction: 'out',
        author: 'Мария Менеджер',
        text: 'Добрый день, Анна',
        media: null,
        at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        state: 'queued',
        error: null,
      },
    });
    server.clock.advance(1_000);
    await settled(server);
    expect(
      sandbox
        .messages(VISITOR.id)
        .filter((m) => m.from.is_bot)
        .map((m) => m.text),
    ).toContain('Добрый день, Анна');

    // The group sees the answer too, under the card: the team's conversation is one whichever door it took.
    const card = sandbox.messages(LEADS_CHAT).find((m) => m.text.startsWith(`🆕 Заявка #${leadNumber}`))!;
    const shown = sandbox.messages(LEADS_CHAT).filter((m) => m.text.startsWith('📤'));
    expect(shown.map((m) => [m.text, m.reply_to_message_id])).toEqual([
      [`📤 Ответ из инбокса · заявка #${leadNumber} · Мария Менеджер\nДобрый день, Анна`, card.message_id],
    ]);

    const read = await inboxCall(server, sandbox, `leads/${leadNumber}/messages`);
    expect(read.status).toBe(200);
    expect(read.body.bound).toEqual({ username: 'anna_k', name: 'Анна Ким' });
    expect(read.body.messages.map((m: any) => [m.direction, m.author, m.text, m.state])).toEqual([
      ['in', 'Анна Ким (@anna_k)', 'Здравствуйте!', 'delivered'],
      ['out', 'Мария Менеджер', 'Добрый день, Анна', 'delivered'],
    ]);
  });

  it("the list says, by lead, how many of the visitor's messages wait for the team's answer", async () => {
    const server = await boot({ polling: true });
    const other = (await postLead(server, lead())).body.lead_number as number;
    const leadNumber = await newLead(server, true);
    expect(other).not.toBe(leadNumber);
    const waiting = async () => (await inboxCall(server, sandbox, 'leads')).body.waiting;
    expect(await waiting()).toEqual({});
    sandbox.say(VISITOR.id, 'Здравствуйте!', VISITOR);
    sandbox.say(VISITOR.id, 'Есть кто?', VISITOR);
    await waitStored(server, 2);
    expect(await waiting()).toEqual({ [leadNumber]: 2 });
    // The team's answer (sent or on its way) ends the wait; the visitor's next message starts it again.
    expect(
      (await inboxCall(server, sandbox, `leads/${leadNumber}/messages`, { method: 'POST', body: { text: 'Да, слушаю' } })).status,
    ).toBe(202);
    expect(await waiting()).toEqual({});
    sandbox.say(VISITOR.id, 'Спасибо', VISITOR);
    await waitStored(server, 4);
    expect(await waiting()).toEqual({ [leadNumber]: 1 });
    // An answer that never reaches them (the bot blocked) ends nothing: they still wait.
    server.clock.advance(1_000);
    await settled(server);
    sandbox.state.blocked.add(VISITOR.id);
    await inboxCall(server, sandbox, `leads/${leadNumber}/messages`, { method: 'POST', body: { text: 'Пожалуйста' } });
    server.clock.advance(1_000);
    await settled(server);
    expect(await waiting()).toEqual({ [leadNumber]: 1 });
    sandbox.state.blocked.delete(VISITOR.id);
    // After /stop nobody can answer them: nothing waits.
    await memberActions(sandbox).command(VISITOR.id, '/stop', VISITOR);
    expect(await waiting()).toEqual({});
  });

  it('a message the visitor cannot get (the bot blocked): the notice under the card names it, author and text', async () => {
    const server = await boot({ polling: true });
    const leadNumber = await newLead(server, true);
    sandbox.state.blocked.add(VISITOR.id);
    const sent = await inboxCall(server, sandbox, `leads/${leadNumber}/messages`, { method: 'POST', body: { text: 'Пришлите логотип' } });
    expect(sent.status).toBe(202);
    server.clock.advance(1_000);
    await settled(server);
    const card = sandbox.messages(LEADS_CHAT).find((m) => m.text.startsWith(`🆕 Заявка #${leadNumber}`))!;
    const notices = sandbox.messages(LEADS_CHAT).filter((m) => m.text.startsWith('⚠️ Не доставлено'));
    expect(notices.map((m) => [m.text, m.reply_to_message_id])).toEqual([
      ['⚠️ Не доставлено посетителю: он заблокировал бота\n📤 Сообщение из инбокса · Мария Менеджер\nПришлите логотип', card.message_id],
    ]);
  });

  it('409 not_bound for a lead without a visitor; bound null', async () => {
    const server = await boot({ polling: true });
    const leadNumber = await newLead(server, false);
    const sent = await inboxCall(server, sandbox, `leads/${leadNumber}/messages`, { method: 'POST', body: { text: 'Алло' } });
    expect([sent.status, sent.body]).toEqual([409, { error: 'not_bound' }]);
    const read = await inboxCall(server, sandbox, `leads/${leadNumber}/messages`);
    expect([read.status, read.body]).toEqual([200, { messages: [], bound: null, stopped: false }]);
  });

  it('after /stop: bound null and stopped, so the page says the visitor unsubscribed, not that they never opened the bot', async () => {
    const server = await boot({ polling: true });
    const leadNumber = await newLead(server, true);
    expect((await inboxCall(server, sandbox, `leads/${leadNumber}/messages`)).body).toMatchObject({
      bound: { username: 'anna_k' },
      stopped: false,
    });
    await memberActions(sandbox).command(VISITOR.id, '/stop', VISITOR);
    const read = await inboxCall(server, sandbox, `leads/${leadNumber}/messages`);
    expect([read.status, read.body]).toEqual([200, { messages: [], bound: null, stopped: true }]);
    const sent = await inboxCall(server, sandbox, `leads/${leadNumber}/messages`, { method: 'POST', body: { text: 'Алло' } });
    expect([sent.status, sent.body]).toEqual([409, { error: 'not_bound' }]);
  });

  it('403 for a member who may not change the status (LEADS_MANAGER_IDS); 422 for an empty or too long text; 404 for no lead', async () => {
    const server = await boot({ polling: true, env: { LEADS_MANAGER_IDS: String(DEFAULT_USER.id) } });
    sandbox.state.setMember(LEADS_CHAT, MEMBER, 'member');
    const leadNumber = await newLead(server, true);
    const path = `leads/${leadNumber}/messages`;
    expect((await inboxCall(server, sandbox, path, { user: MEMBER })).status).toBe(200);
    const refused = await inboxCall(server, sandbox, path, { user: MEMBER, method: 'POST', body: { text: 'Привет' } });
    expect([refused.status, refused.body]).toEqual([403, { error: 'forbidden' }]);
    // Telegram counts UTF-16 units (an emoji is two), takes no text of spaces alone; PostgreSQL takes no NUL.
    for (const text of ['', 'я'.repeat(4097), 42, '😀'.repeat(2049), ' \u00a0\n', 'a\u0000b', 'a\u0007b']) {
      const bad = await inboxCall(server, sandbox, path, { method: 'POST', body: { text } });
      expect([bad.status, bad.body.error, Object.keys(bad.body.errors)]).toEqual([422, 'invalid_body', ['text']]);
      // A number is told it is no string, not that it breaks the rule of a text.
      expect(bad.body.errors.text.startsWith('must be a string')).toBe(typeof text !== 'string');
    }
    expect((await inboxCall(server, sandbox, `leads/999/messages`)).status).toBe(404);
    expect(await server.db.db.selectFrom('lead_messages').selectAll().execute()).toEqual([]);
    // At the limit, with line breaks and a tab: taken.
    const longest = `${'😀'.repeat(2046)}a\n\tb`;
    expect(longest.length).toBe(4096);
    expect((await inboxCall(server, sandbox, path, { method: 'POST', body: { text: longest } })).status).toBe(202);
  });

  it("with LEADS_CARD_PII=0 the visitor's name is hidden; the text is shown", async () => {
    const server = await boot({ polling: true, env: { LEADS_CARD_PII: '0' } });
    const leadNumber = await newLead(server, true);
    sandbox.say(VISITOR.id, 'Мой номер +7 999', VISITOR);
    await waitStored(server, 1);
    const read = await inboxCall(server, sandbox, `leads/${leadNumber}/messages`);
    expect(read.body.bound).toEqual({ username: null, name: '' });
    expect(read.body.messages.map((m: any) => [m.author, m.text])).toEqual([[null, 'Мой номер +7 999']]);
  });
});
