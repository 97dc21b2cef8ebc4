// Where a lead came from, in headless Chromium against the built landing (with LANDING_SOURCE), the real
// server and the Telegram sandbox: a visitor arrives from an ad with ?utm_source=…&utm_campaign=…, submits the form,
// and the card in the group shows the source line. With JavaScript and without (the hidden inputs carry it).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { chromium } from 'playwright-core';
import { afterFillTime, CHROMIUM, CHROMIUM_ARGS, LEADS_CHAT, MIN_FILL_MS, SECRET, startLanding, startStack, waitUntil } from './stack.mjs';

let stack;
let browser;
let landing;
let landingUrl;

before(async () => {
  // More than the 5 requests a visitor may send in 10 minutes: every test here is the same visitor to the server.
  stack = await startStack({ serverEnv: { LEADS_IP_LIMIT: '20' } });
  // A second landing beside the stack's, named `wedding`, against the same server and sandbox.
  ({ child: landing, url: landingUrl } = await startLanding(
    {
      LEADS_ENDPOINT: `${stack.serverUrl}/leads`,
      LEADS_SECRET: SECRET,
      TELEGRAM_BOT_TOKEN: '123456789:sandbox-token',
      TELEGRAM_API_ROOT: stack.sandboxUrl,
      LEADS_CHAT_ID: String(LEADS_CHAT),
      MIN_FILL_MS: String(MIN_FILL_MS),
      LANDING_SOURCE: 'wedding',
    },
    { name: 'landing-wedding' },
  ));
  browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
});
after(async () => {
  await browser?.close();
  if (landing && landing.exitCode === null) {
    landing.kill('SIGTERM');
    await new Promise((r) => landing.once('exit', r));
  }
  await stack?.stop();
});

async function fillLikeAPerson(page, { name, telegram, phone }) {
  await page.getByLabel('Имя').pressSequentially(name, { delay: 20 });
  await page.getByLabel('Ник в Telegram').pressSequentially(telegram, { delay: 20 });
  await page.getByLabel('Телефон').pressSequentially(phone, { delay: 20 });
  await afterFillTime(page);
}

describe('where a lead came from, in a browser', () => {
  for (const javaScriptEnabled of [true, false]) {
    it(`a visitor from an ad (?utm_source=…&utm_campaign=…) submits ${javaScriptEnabled ? 'with' : 'without'} JavaScript: the card shows the source line`, async () => {
      const context = await browser.newContext({ javaScriptEnabled });
      const page = await context.newPage();
      const campaign = javaScriptEnabled ? 'summer' : 'winter';
      await page.goto(`${landingUrl}/?utm_source=yandex&utm_medium=cpc&utm_campaign=${campaign}`, {
        referer: 'https://yandex.ru/search/?text=stickers',
      });
      const name = javaScriptEnabled ? 'Ирина Рекламная' : 'Илья Безскриптов';
      await fillLikeAPerson(page, {
        name,
        telegram: javaScriptEnabled ? '@irina_ads' : '@ilya_ads',
        phone: javaScriptEnabled ? '+7 999 555-71-71' : '+7 999 555-72-72',
      });
      await page.getByRole('button', { name: 'Отправить заявку' }).click();
      await page.locator('[data-state="sent"]').waitFor({ timeout: 10000 });
      const card = await waitUntil(async () => (await stack.cards()).find((c) => c.text.includes(name)), 10000, 'the card');
      const lines = card.text.split('\n');
      assert.equal(lines[2], `📣 wedding · yandex / cpc / ${campaign}`);
      // The trace has the whole source, the referrer's host included.
      const trace = await (
        await fetch(`${stack.serverUrl}/leads/${encodeURIComponent(lines[0].replace('🆕 Заявка ', ''))}/trace`, {
          headers: { 'X-Stickers-Leads-Secret': SECRET },
        })
      ).json();
      assert.deepEqual(trace.lead.source, {
        landing: 'wedding',
        utm_source: 'yandex',
        utm_medium: 'cpc',
        utm_campaign: campaign,
        referrer: 'yandex.ru',
      });
      await context.close();
    });
  }

  for (const javaScriptEnabled of [true, false]) {
    it(`«Отправить ещё одну заявку» after a request from an ad keeps the ad's UTM values for the next one (JavaScript ${javaScriptEnabled ? 'on' : 'off'})`, async () => {
      const context = await browser.newContext({ javaScriptEnabled });
      const page = await context.newPage();
      const campaign = javaScriptEnabled ? 'autumn' : 'spring';
      // Each on its own landing (the landing lets a visitor send 5 requests in 10 minutes): the stack's has no name.
      const url = javaScriptEnabled ? landingUrl : stack.landingUrl;
      await page.goto(`${url}/?utm_source=vk&utm_campaign=${campaign}`, { referer: 'https://vk.com/feed' });
      const suffix = javaScriptEnabled ? 'js' : 'nojs';
      await fillLikeAPerson(page, {
        name: 'Вера Первая',
        telegram: `@vera_first_${suffix}`,
        phone: javaScriptEnabled ? '+7 999 555-74-74' : '+7 999 555-76-76',
      });
      await page.getByRole('button', { name: 'Отправить заявку' }).click();
      await page.getByRole('link', { name: 'Отправить ещё одну заявку' }).click();
      await page.getByLabel('Имя').waitFor({ timeout: 10000 });
      const second = javaScriptEnabled ? 'Вера Вторая' : 'Вера Безскриптова';
      await fillLikeAPerson(page, {
        name: second,
        telegram: `@vera_second_${suffix}`,
        phone: javaScriptEnabled ? '+7 999 555-75-75' : '+7 999 555-77-77',
      });
      await page.getByRole('button', { name: 'Отправить заявку' }).click();
      await page.locator('[data-state="sent"]').waitFor({ timeout: 10000 });
      const card = await waitUntil(async () => (await stack.cards()).find((c) => c.text.includes(second)), 10000, 'the second card');
      assert.equal(card.text.split('\n')[2], `📣 ${javaScriptEnabled ? 'wedding · ' : ''}vk / ${campaign}`);
      await context.close();
    });
  }

  it('a visitor on the landing of the stack (no LANDING_SOURCE) without UTM parameters: the card has no source line', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(stack.landingUrl);
    await fillLikeAPerson(page, { name: 'Ольга Прямая', telegram: '@olga_direct', phone: '+7 999 555-73-73' });
    await page.getByRole('button', { name: 'Отправить заявку' }).click();
    await page.locator('[data-state="sent"]').waitFor({ timeout: 10000 });
    const card = await waitUntil(async () => (await stack.cards()).find((c) => c.text.includes('Ольга Прямая')), 10000, 'the card');
    assert.doesNotMatch(card.text, /📣/);
    await context.close();
  });
});
