// A lead's conversation on the inbox's lead page, in headless Chromium against the built server: the "Переписка"
// section lists the messages the API gives (from the visitor or the team, who, when, the text or «📷 фото», the
// state — a failed one with its reason) and its box posts the team's answer; 409 not_bound says the visitor has not
// opened the bot; a visitor who sent /stop is said to have, with no box. The conversation's routes (`GET`/`POST /inbox/api/leads/:n/messages`) are answered here by the
// browser with the shapes docs/api.md gives them, so the page is tested on its own; the rest is the real inbox.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { after, before, describe, it } from 'node:test';
import { chromium } from 'playwright-core';
import { DEFAULT_USER, launchUrl, signInitData } from '@stickers/telegram-sandbox';
import { CHROMIUM, CHROMIUM_ARGS, SECRET, startStack, waitUntil } from './stack.mjs';

const TOKEN = '123456789:sandbox-token';
const AXE = createRequire(import.meta.url)('axe-core').source;

let stack;
let browser;
let page;
let leadNumber;
/** What the stubbed routes answer, and what the page sent them. */
let conversation;
let postAnswer;
const posted = [];

const at = (minutes) => new Date(Date.UTC(2026, 0, 10, 9, minutes)).toISOString();
const section = () => page.locator('section#conversation');

async function openLead() {
  await page.goto(launchUrl(`${stack.serverUrl}/inbox?lead=${leadNumber}`, signInitData({ botToken: TOKEN, user: DEFAULT_USER })));
  // Past the loading line (a paragraph of its own in the same box): the conversation as the API answered it.
  await section().locator('.conversation').filter({ hasNotText: 'Загрузка…' }).locator('> p').first().waitFor();
}

before(async () => {
  stack = await startStack();
  const res = await fetch(`${stack.serverUrl}/leads`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-Stickers-Leads-Secret': SECRET },
    body: JSON.stringify({
      request_id: randomUUID(),
      client_ip: '203.0.113.40',
      name: 'Анна Ким',
      telegram: '@anna_k',
      phone: '+79161234500',
    }),
  });
  assert.equal(res.status, 201);
  leadNumber = (await res.json()).lead_number;
  browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  const context = await browser.newContext({ viewport: { width: 390, height: 844 }, locale: 'ru-RU' });
  page = await context.newPage();
  page.setDefaultTimeout(10000);
  await page.route(`**/inbox/api/leads/${leadNumber}/messages`, async (route) => {
    const request = route.request();
    assert.match(request.headers().authorization ?? '', /^tma /);
    if (request.method() === 'GET') return route.fulfill({ status: 200, json: conversation });
    posted.push(request.postDataJSON());
    const [status, json] = postAnswer();
    return route.fulfill({ status, json });
  });
});

after(async () => {
  await browser?.close();
  await stack?.stop();
});

describe("the inbox: a lead's conversation", () => {
  it("the list marks a lead whose visitor's messages wait for an answer, by how many", async () => {
    // The server's count (server/test/conversations-inbox.test.ts) put into its real answer: the page draws it.
    await page.route('**/inbox/api/leads?*', async (route) => {
      const real = await route.fetch();
      route.fulfill({ response: real, json: { ...(await real.json()), waiting: { [leadNumber]: 3 } } });
    });
    await page.goto(launchUrl(`${stack.serverUrl}/inbox`, signInitData({ botToken: TOKEN, user: DEFAULT_USER })));
    const row = page.locator('li.lead', { hasText: `#${leadNumber}` });
    assert.equal(await row.locator('.waiting').innerText(), '💬 3 без ответа');
    await page.unroute('**/inbox/api/leads?*');
  });

  it('before the visitor opens the bot: says so, and a send answered 409 not_bound says the visitor has not opened the bot yet', async () => {
    conversation = { messages: [], bound: null, stopped: false };
    postAnswer = () => [409, { error: 'not_bound' }];
    await openLead();
    assert.equal(await section().locator('h2').innerText(), 'Переписка');
    assert.match(await section().innerText(), /Клиент ещё не открыл бота/);
    assert.match(await section().innerText(), /Сообщений пока нет\./);
    await page.getByLabel('Сообщение клиенту').fill('Здравствуйте!');
    await section().getByRole('button', { name: 'Отправить' }).click();
    await waitUntil(
      async () => /отправить сообщение пока нельзя/.test(await section().locator('#conversation-note').innerText()),
      5000,
      'the note',
    );
    assert.equal(await section().locator('#conversation-note').innerText(), 'Клиент ещё не открыл бота — отправить сообщение пока нельзя.');
    assert.deepEqual(posted, [{ text: 'Здравствуйте!' }]);
  });

  it('after /stop: says the visitor unsubscribed, and offers no box to write in', async () => {
    conversation = {
      bound: null,
      stopped: true,
      messages: [{ id: 1, direction: 'in', author: 'Анна Ким', text: 'Спасибо', media: null, at: at(1), state: 'delivered', error: null }],
    };
    await openLead();
    assert.match(await section().innerText(), /Клиент отписался от бота командой \/stop/);
    assert.doesNotMatch(await section().innerText(), /не открыл бота/);
    assert.equal(await section().locator('form.composer').count(), 0);
  });

  it('with LEADS_CARD_PII=0: a bound visitor is said to be bound, the account hidden', async () => {
    conversation = {
      bound: { username: null, name: '' },
      stopped: false,
      messages: [{ id: 1, direction: 'in', author: null, text: 'Здравствуйте', media: null, at: at(1), state: 'delivered', error: null }],
    };
    await openLead();
    assert.match(await section().innerText(), /С клиентом в Telegram: скрыто/);
    assert.doesNotMatch(await section().innerText(), /не открыл бота/);
    assert.doesNotMatch(await section().innerText(), /не совпадает/);
  });

  it('an account that is not the username the form gave is said to differ, as the card says', async () => {
    conversation = { bound: { username: 'galina_o', name: 'Галина' }, stopped: false, messages: [] };
    await openLead();
    const who = section().locator('p', { hasText: 'С клиентом в Telegram' });
    assert.equal(await who.innerText(), 'С клиентом в Telegram: @galina_o (Галина) ⚠️ не совпадает с указанным в заявке (@anna_k)');
    assert.equal(await who.locator('strong').innerText(), '⚠️ не совпадает с указанным в заявке (@anna_k)');
  });

  it('lists the messages: side, author, time, text or «📷 фото», state; a failed one with its reason', async () => {
    conversation = {
      bound: { username: 'anna_k', name: 'Анна Ким' },
      stopped: false,
      messages: [
        { id: 1, direction: 'in', author: 'Анна Ким', text: 'А можно быстрее?', media: null, at: at(1), state: 'delivered', error: null },
        { id: 2, direction: 'in', author: 'Анна Ким', text: null, media: 'photo', at: at(2), state: 'delivered', error: null },
        { id: 3, direction: 'out', author: 'Мария', text: 'Да, завтра', media: null, at: at(3), state: 'delivered', error: null },
        {
          id: 4,
          direction: 'out',
          author: 'Мария',
          text: 'Вы здесь?',
          media: null,
          at: at(4),
          state: 'failed',
          error: 'the visitor blocked the bot',
        },
        { id: 5, direction: 'in', author: 'Анна Ким', text: null, media: 'voice', at: at(5), state: 'delivered', error: null },
        {
          id: 6,
          direction: 'out',
          author: 'Мария',
          text: 'Алло?',
          media: null,
          at: at(6),
          state: 'failed',
          error: 'Telegram refused: 400: Bad Request: chat not found',
        },
      ],
    };
    await openLead();
    assert.match(await section().innerText(), /С клиентом в Telegram: @anna_k \(Анна Ким\)/);
    assert.doesNotMatch(await section().innerText(), /не совпадает/);
    const items = section().locator('ol.messages > li');
    assert.equal(await items.count(), 6);
    assert.deepEqual(await items.evaluateAll((li) => li.map((l) => l.className)), [
      'message in',
      'message in',
      'message out',
      'message out failed',
      'message in',
      'message out failed',
    ]);
    // A visitor message says whether the group sees it; a team message whether the visitor got it.
    assert.match(await items.nth(0).innerText(), /^Клиент · Анна Ким · .+\nА можно быстрее\?\nпоказано в группе$/);
    assert.match(await items.nth(1).innerText(), /📷 фото/);
    assert.match(await items.nth(2).innerText(), /^Команда · Мария · .+\nДа, завтра\nдоставлено$/);
    // The reason the server stored, in the page's words; each kind of media by its name.
    assert.match(await items.nth(3).innerText(), /не доставлено: клиент заблокировал бота$/);
    assert.match(await items.nth(4).innerText(), /🎤 голосовое/);
    assert.match(await items.nth(5).innerText(), /не доставлено: Telegram отказал \(400: Bad Request: chat not found\)$/);
  });

  it('sends the answer and shows it queued; an empty one is not sent, and the page says why', async () => {
    const queued = {
      id: 5,
      direction: 'out',
      author: 'Мария',
      text: 'Пришлите фото',
      media: null,
      at: at(5),
      state: 'queued',
      error: null,
    };
    postAnswer = () => {
      conversation = { ...conversation, messages: [...conversation.messages, queued] };
      return [202, { message: queued }];
    };
    // Nothing but spaces: said so, the box in focus, nothing posted.
    const before = posted.length;
    await page.getByLabel('Сообщение клиенту').fill('   ');
    await section().getByRole('button', { name: 'Отправить' }).click();
    assert.equal(await section().locator('#conversation-note').innerText(), 'Напишите текст сообщения.');
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'conversation-text');
    assert.equal(posted.length, before);
    await page.getByLabel('Сообщение клиенту').fill('Пришлите фото');
    await section().getByRole('button', { name: 'Отправить' }).click();
    await section().locator('ol.messages > li', { hasText: 'Пришлите фото' }).waitFor();
    assert.match(await section().locator('ol.messages > li').last().innerText(), /в очереди$/);
    assert.equal(await section().locator('#conversation-note').innerText(), 'Сообщение принято к отправке: его состояние — в списке выше.');
    assert.equal(await page.getByLabel('Сообщение клиенту').inputValue(), '');
    assert.deepEqual(posted.at(-1), { text: 'Пришлите фото' });
  });

  it("keeps itself fresh while open: the visitor's new message and the team's delivered one appear, and the text being typed stays", async () => {
    const box = page.getByLabel('Сообщение клиенту');
    await box.fill('Черновик ответа');
    conversation = {
      ...conversation,
      messages: [
        ...conversation.messages.map((m) => (m.state === 'queued' ? { ...m, state: 'delivered' } : m)),
        { id: 7, direction: 'in', author: 'Анна Ким', text: 'Уже отправила', media: null, at: at(7), state: 'delivered', error: null },
      ],
    };
    await section().locator('ol.messages > li', { hasText: 'Уже отправила' }).waitFor();
    assert.match(await section().locator('ol.messages > li', { hasText: 'Пришлите фото' }).innerText(), /доставлено$/);
    assert.equal(await box.inputValue(), 'Черновик ответа');
    assert.ok(await box.evaluate((node) => node === document.activeElement), 'the box keeps the focus');
    await box.fill('');
  });

  it('has no WCAG 2.1 AA violation on the lead page with its conversation', async () => {
    await section().locator('ol.messages').waitFor();
    await page.evaluate(AXE);
    const result = await page.evaluate(() =>
      window.axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } }),
    );
    assert.deepEqual(
      result.violations.map((v) => `${v.id}: ${v.help} — ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`),
      [],
    );
  });
});
