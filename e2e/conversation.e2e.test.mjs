// The whole conversation of "Continue in Telegram", in headless Chromium against the built landing, server and sandbox
// (the links pointed at the sandbox's stand-in for t.me, as `npm run dev` does): the form, the sent screen and its link,
// `/start` in the visitor's chat, the card's verified account, a member's reply to the card reaching the visitor, the
// visitor's photo reaching the group under the card, and the inbox showing both messages and sending a third.
// CONVERSATION_SCREENSHOTS=<dir> also writes the sent screen, the visitor's chat and the card there.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { chromium } from 'playwright-core';
import { DEFAULT_USER, DEFAULT_VISITOR, launchUrl, signInitData } from '@stickers/telegram-sandbox';
import { afterFillTime, CHROMIUM, CHROMIUM_ARGS, LEADS_CHAT, startStack, waitUntil } from './stack.mjs';

const TOKEN = '123456789:sandbox-token';
const SHOTS = process.env.CONVERSATION_SCREENSHOTS;

let stack;
let browser;

async function shoot(target, name) {
  if (SHOTS) await target.screenshot({ path: join(SHOTS, name) });
}

before(async () => {
  stack = await startStack({ linksToSandbox: true });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
});
after(async () => {
  await browser?.close();
  await stack?.stop();
});

const groupMessages = async () => (await stack.state()).chats.find((c) => c.id === LEADS_CHAT).messages;
const visitorMessages = async () => (await stack.state()).chats.find((c) => c.id === DEFAULT_VISITOR.id)?.messages ?? [];

describe('the visitor and the team in one conversation', () => {
  it('form → sent screen → the link → /start → verified on the card → replies both ways → the inbox shows and sends', async () => {
    const context = await browser.newContext({ viewport: { width: 1400, height: 900 }, locale: 'ru-RU' });
    const page = await context.newPage();
    page.setDefaultTimeout(15000);

    // The form and its sent screen, with the link.
    await page.goto(stack.landingUrl);
    await page.getByLabel('Имя').fill('Анна Ким');
    await page.getByLabel('Ник в Telegram').fill('@anna_k');
    await page.getByLabel('Телефон').fill('+7 999 555-66-77');
    await afterFillTime(page);
    await page.getByRole('button', { name: 'Отправить заявку' }).click();
    await page.locator('[data-state="sent"]').waitFor();
    const number = Number(/#(\d+)/.exec(await page.locator('[data-state="sent"]').innerText())[1]);
    const link = page.getByRole('link', { name: 'Получить ответ в Telegram' });
    assert.match(await link.getAttribute('href'), /\/sandbox\/t\.me\/stickers_leads_bot\?start=[A-Za-z0-9_-]{20,64}$/);
    await shoot(page, 'conversation-sent-screen.png');

    // The link opens the bot (in a new tab) as the visitor: /start, and the bot's answer names the lead.
    const [telegram] = await Promise.all([context.waitForEvent('page'), link.click()]);
    telegram.setDefaultTimeout(15000);
    const chat = telegram.locator(`section[data-chat-id="${DEFAULT_VISITOR.id}"]`);
    await chat.locator('.msg:not(.user)', { hasText: `заявка #${number}` }).waitFor();

    // The card shows the verified account.
    const card = await waitUntil(
      async () => (await stack.cards()).find((c) => c.text.includes(`Заявка #${number}`) && c.text.includes('Telegram подтверждён')),
      15000,
      'the card with the verified account',
    );
    assert.match(card.text, /✅ Telegram подтверждён: @anna_visitor/);

    // A member replies to the card on the sandbox page; the visitor's chat shows it, from the bot.
    const group = telegram.locator(`section[data-chat-id="${LEADS_CHAT}"]`);
    await group.locator(`[data-message-id="${card.message_id}"] button[data-open-reply]`).click();
    const replyBox = group.locator(`form[data-reply-to="${card.message_id}"] input`);
    await replyBox.fill('Здравствуйте! Пришлите фото, пожалуйста');
    await replyBox.press('Enter');
    await chat.locator('.msg:not(.user)', { hasText: 'Пришлите фото, пожалуйста' }).waitFor();
    const reply = (await visitorMessages()).find((m) => m.text === 'Здравствуйте! Пришлите фото, пожалуйста');
    assert.equal(reply.from.is_bot, true);

    // The visitor sends a photo; the group shows it under the card.
    await chat.locator('form[data-visitor] input').fill('Вот наш кот');
    await chat.locator('button[data-photo]').click();
    const relayed = await waitUntil(
      async () => (await groupMessages()).find((m) => m.photo && `${m.text ?? ''}${m.caption ?? ''}`.includes('Вот наш кот')),
      15000,
      'the photo in the group',
    );
    assert.equal(relayed.reply_to_message_id ?? relayed.reply_to_message?.message_id, card.message_id);
    await shoot(chat, 'conversation-visitor-chat.png');
    await shoot(group, 'conversation-card.png');

    // The inbox's lead page shows both messages and sends a third, which reaches the visitor.
    const inbox = await context.newPage();
    await inbox.goto(launchUrl(`${stack.serverUrl}/inbox?lead=${number}`, signInitData({ botToken: TOKEN, user: DEFAULT_USER })));
    const conversation = inbox.locator('section#conversation');
    await conversation.locator('.message.out', { hasText: 'Пришлите фото, пожалуйста' }).waitFor();
    await conversation.locator('.message.in', { hasText: 'Вот наш кот' }).waitFor();
    await conversation.locator('textarea#conversation-text').fill('Спасибо! Эскиз пришлём завтра');
    await conversation.getByRole('button', { name: 'Отправить' }).click();
    await conversation.locator('.message.out', { hasText: 'Эскиз пришлём завтра' }).waitFor();
    await waitUntil(
      async () => (await visitorMessages()).find((m) => m.text === 'Спасибо! Эскиз пришлём завтра' && m.from.is_bot),
      15000,
      "the inbox's message in the visitor's chat",
    );
    await shoot(inbox, 'conversation-inbox.png');
    await context.close();
  });
});
