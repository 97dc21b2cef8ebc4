// The sandbox page as the visitor's side of "Continue in Telegram", in headless Chromium against the built sandbox: a
// bot link (`/sandbox/t.me/<bot>?start=…`) lands on the page with the visitor's private chat in view; the visitor's
// messages on one side and the bot's on the other, a photo without bytes as a tile with its caption, reactions under
// their message; the box writes as the visitor and "📷 фото" sends a photo with its caption, and the bot's buttons there
// are pressed as the visitor; "↩ ответить как участник"
// under a bot's message in a group replies to it as the page's member, and a bot link under the bot's answer to a member
// opens as that member; what is typed survives a redraw. A message link (`/sandbox/t.me/c/<id>/<message>`, the inbox's
// link to a card) shows that message, marked, and a redraw leaves the log where it is.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { chromium } from 'playwright-core';
import { BOT_USER, DEFAULT_USER, DEFAULT_VISITOR, startSandbox } from '@stickers/telegram-sandbox';
import { CHROMIUM, CHROMIUM_ARGS, LEADS_CHAT, waitUntil } from './stack.mjs';

let sandbox;
let browser;
let page;
/** The bodies the page posted to /sandbox/api/say, oldest first; and to /sandbox/api/press. */
const said = [];
const pressed = [];

async function botSays(chatId, text) {
  const res = await fetch(`${sandbox.url}/bot${sandbox.token}/sendMessage`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ chat_id: chatId, text }),
  });
  return (await res.json()).result;
}

const visitorChat = () => page.locator(`section[data-chat-id="${DEFAULT_VISITOR.id}"]`);

before(async () => {
  sandbox = await startSandbox();
  browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  page = await context.newPage();
  page.setDefaultTimeout(10000);
  page.on('request', (r) => {
    if (r.method() === 'POST' && new URL(r.url()).pathname === '/sandbox/api/say') said.push(JSON.parse(r.postData()));
    if (r.method() === 'POST' && new URL(r.url()).pathname === '/sandbox/api/press') pressed.push(JSON.parse(r.postData()));
  });
});

after(async () => {
  await browser?.close();
  await sandbox?.stop();
});

describe('the sandbox page: the visitor and the bot', () => {
  it("a bot link lands on the page with the visitor's chat in view, the visitor's /start on one side and the bot's answer on the other", async () => {
    await page.goto(`${sandbox.url}/sandbox/t.me/${BOT_USER.username}?start=Payload_1`);
    assert.equal(new URL(page.url()).search, `?chat=${DEFAULT_VISITOR.id}`);
    await visitorChat().locator('.msg.user', { hasText: '/start Payload_1' }).waitFor();
    assert.match(await visitorChat().getAttribute('class'), /\bprivate\b/);
    assert.match(await visitorChat().getAttribute('class'), /\bfocus\b/);
    assert.match(await visitorChat().locator('h2').innerText(), /Анна Visitor.*личный чат с @stickers_leads_bot/);
    await botSays(DEFAULT_VISITOR.id, 'Заявка #1 получена');
    const answer = visitorChat().locator('.msg', { hasText: 'Заявка #1 получена' });
    await answer.waitFor();
    assert.doesNotMatch(await answer.getAttribute('class'), /\buser\b/);
  });

  it('fits the window: the header stays in sight and only the chats scroll', async () => {
    const sizes = await page.evaluate(() => ({ page: document.documentElement.scrollHeight, window: innerHeight }));
    assert.ok(sizes.page <= sizes.window, `the page is ${sizes.page} px in a ${sizes.window} px window`);
    const compose = await visitorChat().locator('form[data-visitor]').boundingBox();
    assert.ok(compose.y + compose.height <= sizes.window, "the visitor's box is in sight");
  });

  it('the box writes as the visitor, and keeps what is typed while the page redraws', async () => {
    const box = visitorChat().locator('form[data-visitor] input');
    await box.fill('Здравствуйте, а можно');
    await botSays(DEFAULT_VISITOR.id, 'Ещё одно сообщение бота');
    await visitorChat().locator('.msg', { hasText: 'Ещё одно сообщение бота' }).waitFor();
    assert.equal(await box.inputValue(), 'Здравствуйте, а можно');
    await box.fill('Здравствуйте, а можно быстрее?');
    await box.press('Enter');
    const sent = await waitUntil(
      () => sandbox.messages(DEFAULT_VISITOR.id).find((m) => m.text === 'Здравствуйте, а можно быстрее?'),
      5000,
      "the visitor's message",
    );
    assert.equal(sent.from.id, DEFAULT_VISITOR.id);
    assert.equal(sent.from.username, DEFAULT_VISITOR.username);
  });

  it('"📷 фото" sends a photo as the visitor with the box as its caption; a photo without bytes is a tile with its caption', async () => {
    await visitorChat().locator('form[data-visitor] input').fill('Вот макет');
    await visitorChat().locator('button[data-photo]').click();
    const body = await waitUntil(() => said.find((b) => b.photo === true), 5000, 'the photo sent');
    assert.deepEqual(
      { chat_id: String(body.chat_id), text: body.text, from: body.from.id },
      {
        chat_id: String(DEFAULT_VISITOR.id),
        text: 'Вот макет',
        from: DEFAULT_VISITOR.id,
      },
    );
    await visitorChat().locator('.msg.user', { hasText: 'Вот макет' }).waitFor();
    assert.equal(await visitorChat().locator('form[data-visitor] input').inputValue(), '');

    sandbox.state.addMessage({
      chat_id: DEFAULT_VISITOR.id,
      date: Math.floor(Date.now() / 1000),
      from: DEFAULT_VISITOR,
      text: 'Второй вариант',
      entities: [],
      photo: [{ file_id: 'visitor-photo-1', file_unique_id: 'u1', width: 800, height: 600, file_size: 1000 }],
    });
    const tile = visitorChat().locator('.msg.user', { hasText: 'Второй вариант' }).locator('.tile');
    await tile.waitFor();
    assert.equal(await tile.innerText(), '📷 фото');
  });

  it("a button of the bot's in the visitor's chat is pressed as the visitor", async () => {
    const res = await fetch(`${sandbox.url}/bot${sandbox.token}/sendMessage`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        chat_id: DEFAULT_VISITOR.id,
        text: 'Сообщения идут по заявке #5',
        reply_markup: { inline_keyboard: [[{ text: '✍️ Писать по заявке #4', callback_data: 'talk:4' }]] },
      }),
    });
    const { message_id } = (await res.json()).result;
    await visitorChat().locator(`[data-message-id="${message_id}"] button`, { hasText: 'Писать по заявке #4' }).click();
    const body = await waitUntil(() => pressed.find((b) => b.data === 'talk:4'), 5000, 'the press');
    assert.equal(body.from.id, DEFAULT_VISITOR.id);
  });

  it('reactions show under their message', async () => {
    const msg = sandbox.messages(DEFAULT_VISITOR.id).find((m) => m.text === 'Здравствуйте, а можно быстрее?');
    msg.reactions = [{ type: 'emoji', emoji: '👍' }];
    sandbox.state.changed();
    await visitorChat()
      .locator('.msg', { hasText: 'Здравствуйте, а можно быстрее?' })
      .locator('.reactions span', { hasText: '👍' })
      .waitFor();
  });
});

describe('the sandbox page: a member replies to a card', () => {
  it('"↩ ответить как участник" under a bot\'s message in a group replies to it as the page\'s member', async () => {
    const card = await botSays(LEADS_CHAT, 'Заявка #1 · ответ клиента: можно быстрее?');
    const group = page.locator(`section[data-chat-id="${LEADS_CHAT}"]`);
    await group.locator(`[data-message-id="${card.message_id}"] button[data-open-reply]`).click();
    const box = group.locator(`form[data-reply-to="${card.message_id}"] input`);
    await box.fill('Да, сделаем завтра');
    await box.press('Enter');
    const body = await waitUntil(() => said.find((b) => b.text === 'Да, сделаем завтра'), 5000, 'the reply sent');
    assert.equal(String(body.reply_to_message_id), String(card.message_id));
    assert.equal(String(body.chat_id), String(LEADS_CHAT));
    const reply = await waitUntil(
      () => sandbox.messages(LEADS_CHAT).find((m) => m.text === 'Да, сделаем завтра'),
      5000,
      'the reply in the group',
    );
    assert.equal(reply.from.id, DEFAULT_USER.id);
    await group.locator(`form[data-reply-to="${card.message_id}"]`).waitFor({ state: 'detached' });
  });

  it("a bot link under the bot's answer to a member opens as that member: the group's /stickers_inbox leads to their private chat", async () => {
    const asked = sandbox.say(LEADS_CHAT, '/stickers_inbox', DEFAULT_USER);
    const link = `${sandbox.url}/sandbox/t.me/${BOT_USER.username}?start=inbox`;
    const res = await fetch(`${sandbox.url}/bot${sandbox.token}/sendMessage`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        chat_id: LEADS_CHAT,
        text: '📥 Инбокс заявок',
        reply_to_message_id: asked,
        reply_markup: { inline_keyboard: [[{ text: '📥 Открыть инбокс', url: link }]] },
      }),
    });
    const { message_id } = (await res.json()).result;
    const button = page.locator(`section[data-chat-id="${LEADS_CHAT}"] [data-message-id="${message_id}"] a`, { hasText: 'Открыть инбокс' });
    assert.equal(await button.getAttribute('href'), `${link}&user_id=${DEFAULT_USER.id}`);
    const [opened] = await Promise.all([page.context().waitForEvent('page'), button.click()]);
    const start = await waitUntil(
      () => sandbox.messages(DEFAULT_USER.id).find((m) => m.text === '/start inbox'),
      5000,
      "the member's /start inbox",
    );
    assert.equal(start.from.id, DEFAULT_USER.id);
    await opened.close();
  });
});

describe('the sandbox page: a message link', () => {
  it('opens the group with the message marked and in sight, and a redraw leaves its log there', async () => {
    const ids = [];
    for (let i = 1; i <= 40; i++) ids.push((await botSays(LEADS_CHAT, `Карточка ${i}\nстрока\nстрока`)).message_id);
    const group = page.locator(`section[data-chat-id="${LEADS_CHAT}"]`);
    await page.goto(`${sandbox.url}/sandbox/t.me/c/${String(LEADS_CHAT).slice(4)}/${ids[20]}`);
    assert.equal(new URL(page.url()).search, `?chat=${LEADS_CHAT}&message=${ids[20]}`);
    const target = group.locator(`.msg.target[data-message-id="${ids[20]}"]`);
    await target.waitFor();
    const inSight = () =>
      target.evaluate((m) => {
        const [box, log] = [m.getBoundingClientRect(), m.closest('.log').getBoundingClientRect()];
        return box.top >= log.top && box.bottom <= log.bottom;
      });
    assert.equal(await inSight(), true);
    await botSays(LEADS_CHAT, 'Новая карточка');
    await group.locator('.msg', { hasText: 'Новая карточка' }).waitFor();
    assert.equal(await inSight(), true);
    assert.equal(await group.locator('.msg.target').count(), 1);

    const missing = await fetch(`${sandbox.url}/sandbox/t.me/c/${String(LEADS_CHAT).slice(4)}/999999`, { redirect: 'manual' });
    assert.equal(missing.status, 404);
    assert.equal(await missing.text(), `the sandbox holds no message 999999 in chat ${LEADS_CHAT}\n`);
  });
});
