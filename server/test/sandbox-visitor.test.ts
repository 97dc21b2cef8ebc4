/**
 * The sandbox stands in for t.me: `GET /sandbox/t.me/<bot>?start=<payload>` is a visitor opening the bot's link — a
 * private chat with the bot (made if missing), `/start <payload>` said in it and sent to the bot, then the sandbox page
 * with that chat in view. A message link (`/sandbox/t.me/c/<id>/<message>`) shows that message. With the server, the link
 * of a `POST /leads` answer binds the visitor to the lead.
 */
import { DEFAULT_USER, DEFAULT_VISITOR, startSandbox, type TelegramSandbox } from '@stickers/telegram-sandbox';
import { lead, postLead, sandboxSuite, waitFor } from './harness';

const open = (sandbox: TelegramSandbox, path: string) => fetch(`${sandbox.url}${path}`, { redirect: 'manual' });

describe('the sandbox as the visitor: GET /sandbox/t.me/<bot>', () => {
  let sandbox: TelegramSandbox;
  beforeEach(async () => {
    sandbox = await startSandbox();
  });
  afterEach(async () => {
    await sandbox.stop();
  });

  it("makes the visitor's private chat, says /start <payload> there, the bot gets it, and sends the browser to that chat", async () => {
    expect(sandbox.state.chats.has(DEFAULT_VISITOR.id)).toBe(false);
    const res = await open(sandbox, '/sandbox/t.me/stickers_leads_bot?start=Abc_123-x');
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe(`/?chat=${DEFAULT_VISITOR.id}`);
    expect(sandbox.state.chats.get(DEFAULT_VISITOR.id)).toMatchObject({ type: 'private', title: 'Анна Visitor' });
    expect(sandbox.messages(DEFAULT_VISITOR.id).map((m) => [m.from.id, m.text])).toEqual([[DEFAULT_VISITOR.id, '/start Abc_123-x']]);
    expect(sandbox.state.updates.map((u) => u.message as { text: string; chat: { id: number } } | undefined)).toEqual([
      expect.objectContaining({ text: '/start Abc_123-x', chat: expect.objectContaining({ id: DEFAULT_VISITOR.id, type: 'private' }) }),
    ]);

    // Opened again (the chat is there): one more /start in the same chat, as Telegram sends it.
    expect((await open(sandbox, '/sandbox/t.me/Stickers_Leads_Bot?start=second')).status).toBe(302);
    expect(sandbox.messages(DEFAULT_VISITOR.id).map((m) => m.text)).toEqual(['/start Abc_123-x', '/start second']);
    // Without a payload: /start alone.
    await open(sandbox, '/sandbox/t.me/stickers_leads_bot');
    expect(sandbox.messages(DEFAULT_VISITOR.id).at(-1)?.text).toBe('/start');
  });

  it("as ?user_id= of a user the sandbox knows, in that user's own private chat", async () => {
    const res = await open(sandbox, `/sandbox/t.me/stickers_leads_bot?start=p1&user_id=${DEFAULT_USER.id}`);
    expect(res.headers.get('location')).toBe(`/?chat=${DEFAULT_USER.id}`);
    expect(sandbox.messages(DEFAULT_USER.id).map((m) => [m.from.username, m.text])).toEqual([[DEFAULT_USER.username, '/start p1']]);
  });

  it('another bot, an unknown user or a malformed payload: one line, and nothing said', async () => {
    const wrongBot = await open(sandbox, '/sandbox/t.me/other_bot?start=p1');
    expect(wrongBot.status).toBe(404);
    expect(await wrongBot.text()).toBe('no bot @other_bot in the sandbox: its bot is @stickers_leads_bot\n');
    const unknown = await open(sandbox, '/sandbox/t.me/stickers_leads_bot?start=p1&user_id=424242');
    expect(unknown.status).toBe(404);
    expect(await unknown.text()).toBe('the sandbox knows no user 424242\n');
    const malformed = await open(sandbox, `/sandbox/t.me/stickers_leads_bot?start=${'x'.repeat(65)}`);
    expect(malformed.status).toBe(400);
    expect(await malformed.text()).toBe('a start parameter is 1–64 characters of A–Z a–z 0–9 _ -\n');
    expect(sandbox.state.chats.has(DEFAULT_VISITOR.id)).toBe(false);
    expect(sandbox.state.updates).toEqual([]);
  });

  it("a supergroup message's link (the inbox's link to a card): the page with that chat and message; one it does not hold, 404", async () => {
    sandbox.state.addChat({ id: -1001000000001, type: 'supergroup', title: 'Заявки' });
    const card = sandbox.say(-1001000000001, 'Карточка', DEFAULT_USER);
    const res = await open(sandbox, `/sandbox/t.me/c/1000000001/${card}`);
    expect([res.status, res.headers.get('location')]).toEqual([302, `/?chat=-1001000000001&message=${card}`]);
    expect((await open(sandbox, `/sandbox/t.me/c/1000000001/7/${card}`)).headers.get('location')).toBe(
      `/?chat=-1001000000001&message=${card}`,
    );
    const missing = await open(sandbox, '/sandbox/t.me/c/1000000001/999');
    expect([missing.status, await missing.text()]).toEqual([404, 'the sandbox holds no message 999 in chat -1001000000001\n']);
    expect(sandbox.state.updates.filter((u) => u.message).length).toBe(1);
  });
});

describe('the sandbox as the visitor, with the server', () => {
  const { sandbox, boot } = sandboxSuite();

  it("opening a POST /leads answer's link (LEADS_TELEGRAM_LINK_ROOT at the sandbox) binds the visitor to the lead", async () => {
    const server = await boot({ polling: true, env: { LEADS_TELEGRAM_LINK_ROOT: `${sandbox.url}/sandbox/t.me` } });
    const answer = await postLead(server, lead());
    const link = new URL(String(answer.body.telegram_link));
    expect(link.origin).toBe(sandbox.url);
    const res = await fetch(link, { redirect: 'manual' });
    expect(res.status).toBe(302);
    const reply = await waitFor(
      () => sandbox.messages(DEFAULT_VISITOR.id).find((m) => m.from.is_bot),
      5000,
      "the bot's answer to the visitor's /start",
    );
    expect(reply.text).toContain(`#${answer.body.lead_number}`);
    const bound = await server.db.db
      .selectFrom('telegram_links')
      .select(['lead_id', 'tg_user_id'])
      .where('used_at', 'is not', null)
      .execute();
    expect(bound).toEqual([{ lead_id: answer.body.lead_number, tg_user_id: DEFAULT_VISITOR.id }]);
  });
});
