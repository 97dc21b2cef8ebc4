// The landing in headless Chromium (Debian's chromium, driven by playwright-core) against the built landing, the
// real server and the Telegram sandbox: a person fills the form, with JavaScript and without.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { chromium } from 'playwright-core';
import { afterFillTime, CHROMIUM, CHROMIUM_ARGS, startStack, waitUntil } from './stack.mjs';

let stack;
let browser;

before(async () => {
  stack = await startStack();
  browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
});
after(async () => {
  await browser?.close();
  await stack?.stop();
});

async function fillLikeAPerson(page, { name, telegram, phone, comment }) {
  await page.getByLabel('Имя').pressSequentially(name, { delay: 20 });
  await page.getByLabel('Ник в Telegram').pressSequentially(telegram, { delay: 20 });
  await page.getByLabel('Телефон').pressSequentially(phone, { delay: 20 });
  if (comment) await page.getByLabel('Что хотите получить').fill(comment);
  await afterFillTime(page);
}

describe('landing form in a browser', () => {
  it('with JavaScript: sent, still sent after a reload, and the card is in the group', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(stack.landingUrl);
    await fillLikeAPerson(page, {
      name: 'Вера Браузерная',
      telegram: '@vera_browser',
      phone: '+7 999 555-11-22',
      comment: 'Стикеры для команды',
    });
    await page.evaluate(() => (window.__samePage = true));
    const button = page.getByRole('button', { name: 'Отправить заявку' });
    await button.click();
    // While the request is on its way the button shows progress and cannot be pressed again.
    await page
      .getByRole('button', { name: 'Отправляем…' })
      .waitFor({ state: 'attached', timeout: 2000 })
      .catch(() => undefined);
    await page.locator('[data-state="sent"]').waitFor({ timeout: 10000 });
    assert.equal(await page.evaluate(() => window.__samePage), true, 'no page reload with JavaScript on');
    await page.reload();
    await page.locator('[data-state="sent"]').waitFor({ timeout: 5000 });
    assert.equal(await page.locator('form').count(), 0);
    const card = await waitUntil(async () => (await stack.cards()).find((c) => c.text.includes('Вера Браузерная')), 10000, 'the card');
    assert.match(card.text, /Telegram: @vera_browser/);
    assert.match(card.text, /Телефон: \+7 999 555 11 22/);
    await context.close();
  });

  it('without JavaScript: a plain POST shows sent, and the card is in the group', async () => {
    const context = await browser.newContext({ javaScriptEnabled: false });
    const page = await context.newPage();
    await page.goto(stack.landingUrl);
    await fillLikeAPerson(page, { name: 'Глеб Безскриптов', telegram: 'gleb_nojs', phone: '+7 999 555-33-44' });
    await page.getByRole('button', { name: 'Отправить заявку' }).click();
    await page.locator('[data-state="sent"]').waitFor({ timeout: 10000 });
    await page.goto(stack.landingUrl);
    await page.locator('[data-state="sent"]').waitFor({ timeout: 5000 });
    const card = await waitUntil(async () => (await stack.cards()).find((c) => c.text.includes('Глеб Безскриптов')), 10000, 'the card');
    assert.match(card.text, /Telegram: @gleb_nojs/);
    await context.close();
  });

  it('a field error is shown next to its field, in Russian, and the typed values stay (with and without JavaScript)', async () => {
    for (const javaScriptEnabled of [true, false]) {
      const context = await browser.newContext({ javaScriptEnabled });
      const page = await context.newPage();
      await page.goto(stack.landingUrl);
      await fillLikeAPerson(page, { name: 'Пётр', telegram: '@petr_ok', phone: '12345' });
      await page.getByRole('button', { name: 'Отправить заявку' }).click();
      const error = page.locator('[data-error-for="phone"]');
      await error.waitFor({ timeout: 5000 });
      assert.equal(await error.textContent(), 'Телефон в формате +7 916 555-12-34 или 8 916 555-12-34');
      const phone = page.getByLabel('Телефон');
      assert.equal(await phone.getAttribute('aria-invalid'), 'true');
      assert.match(await phone.getAttribute('aria-describedby'), /phone-error/);
      assert.equal(await page.getByLabel('Имя').inputValue(), 'Пётр');
      assert.equal(await page.locator('[data-state="invalid"]').count(), 1);
      await context.close();
    }
    assert.equal(
      (await stack.cards()).some((c) => c.text.includes('Пётр')),
      false,
    );
  });

  it('keyboard only, on a 360 px screen: no horizontal scroll, every field reachable with Tab, Enter submits', async () => {
    const context = await browser.newContext({ viewport: { width: 360, height: 740 } });
    const page = await context.newPage();
    await page.goto(stack.landingUrl);
    assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= 360), 'the page scrolls sideways at 360 px');
    // A phone's keyboard must not capitalise or "correct" a username as it is typed.
    const username = page.locator('input[name="telegram"]');
    const typedAsIs = ['autocapitalize', 'autocorrect', 'spellcheck'].map((a) => username.getAttribute(a));
    assert.deepEqual(await Promise.all(typedAsIs), ['none', 'off', 'false']);
    await page.getByLabel('Имя').focus();
    await page.keyboard.type('Клава Табова', { delay: 10 });
    await page.keyboard.press('Tab');
    await page.keyboard.type('@klava_tab', { delay: 10 });
    await page.keyboard.press('Tab');
    await page.keyboard.type('+79990001234', { delay: 10 });
    assert.equal(await page.evaluate(() => document.activeElement?.getAttribute('name')), 'phone');
    await afterFillTime(page);
    await page.keyboard.press('Enter');
    await page.locator('[data-state="sent"]').waitFor({ timeout: 10000 });
    await waitUntil(async () => (await stack.cards()).some((c) => c.text.includes('Клава Табова')), 10000, 'the card');
    await context.close();
  });

  it("an address with no page: 404, one line saying so in the page's language, and the way back to the form", async () => {
    const page = await browser.newPage();
    const answer = await page.goto(`${stack.landingUrl}/no-such-page`);
    assert.equal(answer?.status(), 404);
    assert.equal(await page.locator('h1').textContent(), 'Такой страницы нет.');
    await page.getByRole('link', { name: 'Оставить заявку' }).click();
    await page.getByLabel('Имя').waitFor({ timeout: 10000 });
    await page.close();
  });

  it('on the sandbox page a developer presses a card button and watches the card change', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${stack.sandboxUrl}/`);
    const card = page.locator('.msg', { hasText: 'Вера Браузерная' });
    await card.getByRole('button', { name: 'В работу' }).click();
    await card.getByRole('button', { name: 'Заказ' }).waitFor({ timeout: 10000 });
    assert.match(await card.textContent(), /Статус: 🛠 В работе — Мария Менеджер/);
    await context.close();
  });

  it("a visitor whose browser fills the form from a saved address that has a company: the request is delivered, not taken for a bot's", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(stack.landingUrl);
    await page.waitForLoadState('networkidle');
    // Chromium's own autofill, as when the visitor picks a saved address under the name field (DevTools protocol).
    const cdp = await context.newCDPSession(page);
    const { root } = await cdp.send('DOM.getDocument');
    const { nodeId } = await cdp.send('DOM.querySelector', { nodeId: root.nodeId, selector: '#name' });
    const { node } = await cdp.send('DOM.describeNode', { nodeId });
    const saved = {
      NAME_FULL: 'Олег Автозаполнов',
      COMPANY_NAME: 'ООО Ромашка',
      PHONE_HOME_WHOLE_NUMBER: '+79995556677',
      ADDRESS_HOME_CITY: 'Москва',
    };
    await cdp.send('Autofill.trigger', {
      fieldId: node.backendNodeId,
      address: { fields: Object.entries(saved).map(([name, value]) => ({ name, value })) },
    });
    assert.equal(await page.getByLabel('Имя').inputValue(), 'Олег Автозаполнов', 'the browser filled the form');
    await page.getByLabel('Ник в Telegram').pressSequentially('@oleg_autofill', { delay: 20 });
    await afterFillTime(page);
    await page.getByRole('button', { name: 'Отправить заявку' }).click();
    await page.locator('[data-state="sent"]').waitFor({ timeout: 10000 });
    const card = await waitUntil(async () => (await stack.cards()).find((c) => c.text.includes('Олег Автозаполнов')), 10000, 'the card');
    assert.match(card.text, /Telegram: @oleg_autofill/);
    await context.close();
  });

  it('a bot that submits at once gets "sent" and nothing reaches the server or the group', async () => {
    // A landing of the stack whose minimum fill time no loaded machine reaches between the page and its post: the
    // post is too fast however long the browser takes.
    const landing = await stack.landing({ MIN_FILL_MS: '60000' });
    const context = await browser.newContext();
    const page = await context.newPage();
    // As a bot does: the fields set and the form posted the moment the page has arrived, in one step.
    await page.goto(landing.url, { waitUntil: 'domcontentloaded' });
    const requestId = await page.evaluate(() => {
      const form = document.querySelector('form');
      const set = (name, value) => (form.elements.namedItem(name).value = value);
      set('name', 'Быстрый Бот');
      set('telegram', '@fast_bot_x');
      set('phone', '+79990000999');
      const id = form.elements.namedItem('requestId').value;
      HTMLFormElement.prototype.submit.call(form);
      return id;
    });
    await page.locator('[data-state="sent"]').waitFor({ timeout: 10000 });
    // The landing logs its decision after acting on it: a delivery (to the server or the fallback) comes before this line.
    const dropped = `[request] ${requestId} → dropped (too-fast)`;
    await waitUntil(async () => landing.child.output.includes(dropped), 5000, 'the landing dropping the request');
    const db = new Database(stack.dbPath, { readonly: true });
    try {
      assert.equal(db.prepare('select count(*) from leads where request_id = ?').pluck().get(requestId), 0);
    } finally {
      db.close();
    }
    const state = await stack.state();
    assert.equal(
      state.chats.some((chat) => chat.messages.some((m) => m.text.includes('Быстрый Бот'))),
      false,
    );
    await context.close();
  });
});
