// Languages end to end (docs/requirements.md, "Languages"), in headless Chromium against the built landing with
// LANDING_LOCALE=en, the real server with LEADS_LOCALE=en and the Telegram sandbox: the page is English (`lang="en"`),
// an invalid form is refused in the browser with the English error next to the field, a valid one is sent, and its card
// in the leads group is English, buttons included.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { chromium } from 'playwright-core';
import { DEFAULT_USER, launchUrl, signInitData } from '@stickers/telegram-sandbox';
import { CHROMIUM, CHROMIUM_ARGS, LEADS_CHAT, startStack, waitUntil } from './stack.mjs';

const CYRILLIC = /[\u0400-\u04FF]/;

let stack;
let english;
let browser;

before(async () => {
  stack = await startStack({ serverEnv: { LEADS_LOCALE: 'en' } });
  english = await stack.landing({ MIN_FILL_MS: '0', LANDING_LOCALE: 'en' });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
});
after(async () => {
  await browser?.close();
  await stack?.stop();
});

describe('LANDING_LOCALE=en and LEADS_LOCALE=en', () => {
  it('an English page refuses an invalid form in English, sends a valid one, and its card is English', async () => {
    const context = await browser.newContext({ viewport: { width: 800, height: 900 } });
    const page = await context.newPage();
    const posts = [];
    page.on('request', (r) => r.method() === 'POST' && posts.push(r.url()));
    await page.goto(english.url);
    assert.equal(await page.locator('html').getAttribute('lang'), 'en');
    assert.equal(await page.title(), 'Stickers of your heroes — Stickers');
    assert.doesNotMatch(await page.locator('body').innerText(), CYRILLIC);

    await page.getByRole('textbox', { name: 'Name', exact: true }).fill('Anna Kim');
    await page.getByLabel('Telegram username').fill('@ab');
    await page.getByRole('textbox', { name: 'Phone', exact: true }).fill('+7 999 555-11-22');
    await page.getByRole('button', { name: 'Send request' }).click();
    const error = page.locator('[data-error-for="telegram"]');
    await error.waitFor();
    assert.equal(await error.textContent(), 'Telegram username: @name, 5–32 Latin letters, digits or _, starting with a letter');
    assert.equal(await page.locator('[data-state="invalid"]').textContent(), 'Check the fields marked below.');
    assert.deepEqual(posts, [], 'the browser refused the form before sending it');

    await page.getByLabel('Telegram username').fill('@anna_kim');
    await page.getByRole('button', { name: 'Send request' }).click();
    const done = page.locator('[data-state="sent"] .done');
    await done.waitFor({ timeout: 10000 });
    const number = Number(/^Request #(\d+) sent!$/.exec(await done.textContent())?.[1]);
    assert.ok(Number.isInteger(number) && number > 0, await done.textContent());

    const card = await waitUntil(
      async () => {
        const state = await stack.state();
        return state.chats.find((c) => c.id === LEADS_CHAT).messages.find((m) => m.text.startsWith(`🆕 Lead #${number}\n`));
      },
      10000,
      'the English card',
    );
    assert.match(card.text, /\nName: Anna Kim\nTelegram: @anna_kim\nPhone: \+7 999 555 11 22\n\nStatus: 🆕 New$/);
    assert.deepEqual(
      card.reply_markup.inline_keyboard.map((row) => row.map((b) => b.text)),
      [['Take it', 'Spam'], ['✈️ Message @anna_kim']],
    );
    assert.doesNotMatch(card.text, CYRILLIC);
    await context.close();
  });

  it('the inbox in English numbers and dates the leads as the card does: #N in the list, "Lead #N" on the page', async () => {
    // English before the script runs too.
    const served = await (await fetch(`${stack.serverUrl}/inbox`)).text();
    assert.match(served, /<html lang="en">.*<title>Leads<\/title>/s);
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(launchUrl(`${stack.serverUrl}/inbox`, signInitData({ botToken: '123456789:sandbox-token', user: DEFAULT_USER })));
    const number = page.locator('ol.leads .number').first();
    await number.waitFor();
    const shown = await number.textContent();
    assert.match(shown, /^#\d+$/);
    // Its time written as the English card writes it: 11/29/2026 10:30 AM.
    assert.match(await page.locator('ol.leads .meta').first().innerText(), /^\d\d\/\d\d\/\d{4} \d\d:\d\d [AP]M/);
    await page.locator('ol.leads .lead-link').first().click();
    assert.match(await page.locator('h1').innerText(), new RegExp(`^Lead ${shown}\\b`));
    await context.close();
  });

  it('an address with no page on the English landing: 404, lang en, the English line and the way back', async () => {
    for (const javaScriptEnabled of [true, false]) {
      const context = await browser.newContext({ javaScriptEnabled });
      const page = await context.newPage();
      const answer = await page.goto(`${english.url}/no-such-page`);
      assert.equal(answer?.status(), 404);
      assert.equal(await page.locator('html').getAttribute('lang'), 'en');
      assert.equal(await page.locator('h1').textContent(), 'There is no such page.');
      assert.doesNotMatch(await page.locator('body').innerText(), CYRILLIC);
      await page.getByRole('link', { name: 'Send a request' }).click();
      await page.getByRole('textbox', { name: 'Name', exact: true }).waitFor({ timeout: 10000 });
      await context.close();
    }
  });
});
