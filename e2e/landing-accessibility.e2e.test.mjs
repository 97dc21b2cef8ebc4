// The landing page checked by axe-core (WCAG 2.1 A and AA) in headless Chromium, in each state a visitor meets: the
// empty form, field errors found in the browser and by the action (without JavaScript), and the sent screen; then with
// the consent box, either contact (`any`) and the captcha (the sandbox's Turnstile stand-in): the box's error, the
// captcha's widget and its "pass the check again"; and the English page.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { chromium } from 'playwright-core';
import { wcagViolations, wcagViolationsWithoutScripts } from './accessibility.mjs';
import { afterFillTime, captchaStandInEnv, CHROMIUM, CHROMIUM_ARGS, startStack } from './stack.mjs';

let stack;
let browser;
/** Landings with every new part of the form on: Russian, and English. */
const full = {};

before(async () => {
  stack = await startStack({ serverEnv: { LEADS_IP_LIMIT: '100', LEADS_REQUIRED_CONTACTS: 'any' } });
  for (const locale of ['ru', 'en']) {
    full[locale] = await stack.landing({
      MIN_FILL_MS: '0',
      LANDING_LOCALE: locale,
      LEADS_REQUIRED_CONTACTS: 'any',
      LANDING_PRIVACY_URL: 'https://stickers.example/privacy',
      ...captchaStandInEnv(stack.sandboxUrl),
    });
  }
  browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
});
after(async () => {
  await browser?.close();
  await stack?.stop();
});

async function fill(page, { name, telegram, phone }) {
  await page.getByLabel('Имя').fill(name);
  await page.getByLabel('Ник в Telegram').fill(telegram);
  await page.getByLabel('Телефон').fill(phone);
}

describe('the landing page meets WCAG 2.1 AA (axe-core)', () => {
  it('with JavaScript: the empty form, field errors, the sent screen', async () => {
    const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
    const page = await context.newPage();
    await page.goto(stack.landingUrl);
    await page.getByRole('button', { name: 'Отправить заявку' }).waitFor();
    assert.deepEqual(await wcagViolations(page), [], 'the empty form');

    await fill(page, { name: 'А', telegram: '@no', phone: '12345' });
    await page.getByRole('button', { name: 'Отправить заявку' }).click();
    await page.locator('[data-error-for="phone"]').waitFor({ timeout: 5000 });
    assert.deepEqual(await wcagViolations(page), [], 'field errors');

    await fill(page, { name: 'Ада Доступная', telegram: '@ada_a11y', phone: '8 916 555-12-34' });
    await afterFillTime(page);
    await page.getByRole('button', { name: 'Отправить заявку' }).click();
    await page.locator('[data-state="sent"]').waitFor({ timeout: 10000 });
    assert.deepEqual(await wcagViolations(page), [], 'the sent screen');
    await context.close();
  });

  it('with JavaScript, a slow post that fails: the focus comes back to the button, so Enter sends again', async () => {
    const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
    const page = await context.newPage();
    await page.goto(stack.landingUrl);
    await page.waitForLoadState('networkidle');
    await fill(page, { name: 'Фокус Потерянный', telegram: '@focus_kept', phone: '8 916 555-40-40' });
    await afterFillTime(page);
    // The button is disabled while sending (long enough for the browser to take the focus off it); then the post fails.
    await page.route(
      (url) => url.origin === stack.landingUrl,
      async (route) => {
        if (route.request().method() !== 'POST') return route.fallback();
        await new Promise((r) => setTimeout(r, 1500));
        return route.abort('connectionrefused');
      },
    );
    await page.getByRole('button', { name: 'Отправить заявку' }).focus();
    await page.keyboard.press('Enter');
    await page.locator('[data-state="error"]').waitFor({ timeout: 10000 });
    assert.equal(await page.evaluate(() => document.activeElement?.getAttribute('type')), 'submit');
    await page.unrouteAll();
    await page.keyboard.press('Enter');
    await page.locator('[data-state="sent"]').waitFor({ timeout: 10000 });
    await context.close();
  });

  it('without JavaScript: the errors the action renders, and its sent screen', async () => {
    const context = await browser.newContext({ javaScriptEnabled: false, viewport: { width: 1024, height: 900 } });
    const page = await context.newPage();
    await page.goto(stack.landingUrl);
    await fill(page, { name: 'Б', telegram: 'x', phone: '000' });
    // Without JavaScript the browser's own checks run first; the action's checks are what this state is about.
    await page.locator('form').evaluate((form) => form.setAttribute('novalidate', ''));
    await afterFillTime(page);
    await page.getByRole('button', { name: 'Отправить заявку' }).click();
    await page.locator('[data-error-for="name"]').waitFor({ timeout: 10000 });
    assert.deepEqual(await wcagViolationsWithoutScripts(browser, page), [], 'field errors from the action');

    await fill(page, { name: 'Борис Доступный', telegram: '@boris_a11y', phone: '+7 916 555-12-35' });
    await afterFillTime(page);
    await page.getByRole('button', { name: 'Отправить заявку' }).click();
    await page.locator('[data-state="sent"]').waitFor({ timeout: 10000 });
    assert.deepEqual(await wcagViolationsWithoutScripts(browser, page), [], 'the sent screen from the action');
    await context.close();
  });

  it('with the consent box, either contact and the captcha: the errors, the widget, "pass the check again", sent', async () => {
    const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
    const page = await context.newPage();
    await page.goto(full.ru.url);
    await page.locator('[data-captcha-stand-in]').waitFor({ timeout: 10000 });
    assert.deepEqual(await wcagViolations(page), [], 'the form with the consent box and the widget');

    // Neither contact and no tick: both contacts and the box are marked.
    await page.getByLabel('Имя').fill('Вера Согласная');
    await page.getByRole('button', { name: 'Отправить заявку' }).click();
    await page.locator('[data-error-for="consent"]').waitFor({ timeout: 5000 });
    assert.equal(await page.locator('[data-error-for="phone"]').count(), 1);
    assert.deepEqual(await wcagViolations(page), [], 'the contacts and consent errors');

    // A token the stand-in never issued: the action asks for the check again.
    await page.getByLabel('Телефон', { exact: false }).first().fill('8 916 555-12-36');
    await page.getByRole('checkbox', { name: /согласен/ }).check();
    await page.locator('input[name="cf-turnstile-response"]').evaluate((el) => (el.value = 'forged-token'));
    await page.getByRole('button', { name: 'Отправить заявку' }).click();
    await page.locator('[data-state="captcha"]').waitFor({ timeout: 10000 });
    assert.deepEqual(await wcagViolations(page), [], 'pass the check again');
    if (process.env.LANDING_SCREENSHOTS)
      await page.screenshot({ path: process.env.LANDING_SCREENSHOTS + '/form-captcha.png', fullPage: true });

    await page.getByLabel('Я не робот (проверка-заглушка)').check();
    await page.locator('[data-captcha-stand-in][data-state="passed"]').waitFor({ timeout: 10000 });
    await page.getByRole('button', { name: 'Отправить заявку' }).click();
    await page.locator('[data-state="sent"]').waitFor({ timeout: 10000 });
    assert.deepEqual(await wcagViolations(page), [], 'the sent screen');
    await context.close();
  });

  it('in English: the page, its errors and the consent box', async () => {
    const context = await browser.newContext({ viewport: { width: 1024, height: 900 } });
    const page = await context.newPage();
    await page.goto(full.en.url);
    await page.getByRole('button', { name: 'Send request' }).waitFor();
    assert.equal(await page.locator('html').getAttribute('lang'), 'en');
    assert.deepEqual(await wcagViolations(page), [], 'the English form');
    await page.getByRole('button', { name: 'Send request' }).click();
    await page.locator('[data-error-for="consent"]').waitFor({ timeout: 5000 });
    assert.deepEqual(await wcagViolations(page), [], 'the English errors');
    if (process.env.LANDING_SCREENSHOTS) await page.screenshot({ path: process.env.LANDING_SCREENSHOTS + '/form-en.png', fullPage: true });
    await context.close();
  });
});
