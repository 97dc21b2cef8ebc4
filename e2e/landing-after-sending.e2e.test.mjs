// After sending, in headless Chromium against the built landing, the real server and the Telegram sandbox: the sent
// screen shows the lead's number (with and without JavaScript; the same request again shows the same number), and
// with LANDING_METRIKA_ID and LANDING_GOAL the goal is reached exactly once, after success only. Nothing is loaded from
// any outside host: every request that leaves the landing is recorded and aborted, and the counter's function is a
// stub the test defines before the page's scripts run.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { chromium } from 'playwright-core';
import { afterFillTime, CHROMIUM, CHROMIUM_ARGS, isolatedContext, startStack } from './stack.mjs';

const METRIKA_ID = '12345678';
const GA4_ID = 'G-TEST12345';
const GOAL = 'lead_sent';

let stack;
let counted;
let tagged;
let browser;

before(async () => {
  // Several leads from one loopback visitor: the server's per-visitor limit is not what this file is about.
  stack = await startStack({ serverEnv: { LEADS_IP_LIMIT: '100' } });
  // A second landing on the same server, with a Metrica counter and a goal.
  counted = await stack.landing({ LANDING_METRIKA_ID: METRIKA_ID, LANDING_GOAL: GOAL });
  // A third, with a GA4 tag and the same goal.
  tagged = await stack.landing({ LANDING_GA4_ID: GA4_ID, LANDING_GOAL: GOAL });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
});
after(async () => {
  await browser?.close();
  await stack?.stop();
});

/**
 * Records the body of each form post to the landing (`posts`), and, while `replay.body` is set, sends that body in its
 * place: the same request again, its request id and form token included.
 */
async function recordPosts(context) {
  const posts = [];
  const replay = { body: null };
  await context.route(
    (url) => url.hostname === '127.0.0.1',
    (route) => {
      const request = route.request();
      if (request.method() !== 'POST') return route.fallback();
      posts.push(request.postData());
      return replay.body ? route.continue({ postData: replay.body }) : route.continue();
    },
  );
  return { posts, replay };
}

async function fillLikeAPerson(page, { name, telegram, phone }) {
  await page.getByLabel('Имя').pressSequentially(name, { delay: 20 });
  await page.getByLabel('Ник в Telegram').pressSequentially(telegram, { delay: 20 });
  await page.getByLabel('Телефон').pressSequentially(phone, { delay: 20 });
  await afterFillTime(page);
}

function leadNumberOf(requestId) {
  const db = new Database(stack.dbPath, { readonly: true });
  try {
    return db.prepare('select id from leads where request_id = ?').pluck().get(requestId);
  } finally {
    db.close();
  }
}

const requestIdOf = (body) => new URLSearchParams(body).get('requestId');
const sentText = (page) => page.locator('[data-state="sent"] .done').textContent();

describe('after sending', () => {
  it('with JavaScript: the sent screen shows the number, and without a counter nothing leaves the landing', async () => {
    const { context, outside } = await isolatedContext(browser, { viewport: { width: 800, height: 900 } });
    const { posts } = await recordPosts(context);
    const page = await context.newPage();
    await page.goto(stack.landingUrl);
    assert.equal(await page.locator('script[src^="http"]').count(), 0, 'no outside script on the page');
    await fillLikeAPerson(page, { name: 'Нина Номерова', telegram: '@nina_number', phone: '+7 999 555-66-77' });
    await page.getByRole('button', { name: 'Отправить заявку' }).click();
    await page.locator('[data-state="sent"]').waitFor({ timeout: 10000 });
    const number = leadNumberOf(requestIdOf(posts[0]));
    assert.ok(Number.isInteger(number) && number > 0);
    assert.equal(await sentText(page), `Заявка #${number} отправлена!`);
    assert.equal(await page.locator('[data-state="sent"]').getAttribute('role'), 'status');
    await page.screenshot({ path: '/tmp/sent-screen.png', fullPage: true });
    // "Send another" is a target a finger hits: 44 px tall, not its line of text.
    const again = await page.getByRole('link', { name: 'Отправить ещё одну заявку' }).boundingBox();
    assert.ok(again.height >= 44, `the link is ${again.height} px tall`);
    assert.equal(await page.evaluate(() => typeof window.ym + typeof window.gtag), 'undefinedundefined');
    assert.deepEqual(outside, []);
    // The sent screen stays on a reload; `/?again` typed or bookmarked (not the link clicked) shows the form all the same.
    await page.reload();
    assert.equal(await sentText(page), `Заявка #${number} отправлена!`);
    await page.goto(`${stack.landingUrl}/?again`);
    await page.getByRole('button', { name: 'Отправить заявку' }).waitFor();
    assert.equal(await page.locator('[data-state="sent"]').count(), 0);
    await context.close();
  });

  it('without JavaScript: the action renders the number; the same request again shows the same number', async () => {
    const { context, outside } = await isolatedContext(browser, { javaScriptEnabled: false });
    const { posts, replay } = await recordPosts(context);
    const page = await context.newPage();
    await page.goto(stack.landingUrl);
    await fillLikeAPerson(page, { name: 'Олег Безскриптов', telegram: '@oleg_nojs', phone: '+7 999 555-77-88' });
    await page.getByRole('button', { name: 'Отправить заявку' }).click();
    await page.locator('[data-state="sent"]').waitFor({ timeout: 10000 });
    const number = leadNumberOf(requestIdOf(posts[0]));
    assert.equal(await sentText(page), `Заявка #${number} отправлена!`);

    // The same request again (a retry: its request id and form token), from a fresh form in the same browser.
    await page.getByRole('link', { name: 'Отправить ещё одну заявку' }).click();
    await fillLikeAPerson(page, { name: 'Олег Безскриптов', telegram: '@oleg_nojs', phone: '+7 999 555-77-88' });
    replay.body = posts[0];
    await page.getByRole('button', { name: 'Отправить заявку' }).click();
    await page.locator('[data-state="sent"]').waitFor({ timeout: 10000 });
    assert.equal(await sentText(page), `Заявка #${number} отправлена!`);
    assert.equal(posts.length, 2);

    // A later visit shows the sent screen from the sent memory, without the number.
    await page.goto(stack.landingUrl);

    assert.equal(await sentText(page), 'Заявка отправлена!');
    assert.deepEqual(outside, []);
    await context.close();
  });

  it('with a Metrica goal: not on a page load or a field error; once after success, not again on a reload, back and forth, or the same request again', async () => {
    const { context, outside } = await isolatedContext(browser);
    const { posts, replay } = await recordPosts(context);
    const calls = [];
    await context.exposeBinding('__recordYm', (_source, args) => void calls.push(args));
    // Defined before the page's own scripts: the page's bootstrap keeps an existing `ym`, as Metrica's snippet does.
    await context.addInitScript(() => {
      window.ym = (...args) => void window.__recordYm(args);
    });
    const goals = () => calls.filter((args) => args[1] === 'reachGoal');
    const settle = () => new Promise((r) => setTimeout(r, 700));

    const page = await context.newPage();
    await page.goto(counted.url);
    await settle();
    assert.deepEqual(
      calls.map((args) => args.slice(0, 2)),
      [[Number(METRIKA_ID), 'init']],
      'the counter starts on the page load, with no goal',
    );
    assert.equal(await page.locator(`script[src="https://mc.yandex.ru/metrika/tag.js"]`).count(), 1);

    await fillLikeAPerson(page, { name: 'Цель Однократная', telegram: '@goal_once', phone: '12345' });
    await page.getByRole('button', { name: 'Отправить заявку' }).click();
    await page.locator('[data-error-for="phone"]').waitFor({ timeout: 5000 });
    await settle();
    assert.deepEqual(goals(), [], 'no goal on a field error');

    await page.getByLabel('Телефон').fill('+7 999 555-99-00');
    await page.waitForTimeout(300);
    await page.getByRole('button', { name: 'Отправить заявку' }).click();
    await page.locator('[data-state="sent"]').waitFor({ timeout: 10000 });
    const number = leadNumberOf(requestIdOf(posts.at(-1)));
    assert.equal(await sentText(page), `Заявка #${number} отправлена!`);
    await settle();
    assert.deepEqual(goals(), [[Number(METRIKA_ID), 'reachGoal', GOAL]], 'the goal once, after success');

    await page.reload();
    await page.locator('[data-state="sent"]').waitFor({ timeout: 5000 });
    await page.goBack().catch(() => undefined);
    await page.goForward().catch(() => undefined);
    await page.locator('[data-state="sent"]').waitFor({ timeout: 5000 });
    await settle();
    assert.equal(goals().length, 1, 'not again on a reload or back and forth');

    // The same request answered again (a retry of its post): the same number, and still one goal.
    await page.getByRole('link', { name: 'Отправить ещё одну заявку' }).click();
    await fillLikeAPerson(page, { name: 'Цель Однократная', telegram: '@goal_once', phone: '+7 999 555-99-00' });
    replay.body = posts.at(-1);
    await page.getByRole('button', { name: 'Отправить заявку' }).click();
    await page.locator('[data-state="sent"]').waitFor({ timeout: 10000 });
    assert.equal(await sentText(page), `Заявка #${number} отправлена!`);
    await settle();
    assert.equal(goals().length, 1, 'not again for the same request id');

    // Only the counter's own script went out (and was aborted here): nothing else left the landing.
    assert.ok(outside.length > 0 && outside.every((url) => url === 'https://mc.yandex.ru/metrika/tag.js'), outside.join(', '));
    await context.close();
  });

  it('with a GA4 goal: the tag starts on load; the event once per delivered request, only after the landing answered', async () => {
    const { context, outside } = await isolatedContext(browser);
    const { posts } = await recordPosts(context);
    // One log of what happened, in order: each gtag call and each answer of the landing's action to a form post.
    const log = [];
    let logged = () => undefined;
    const record = (entry) => {
      log.push(entry);
      logged();
    };
    const until = (predicate, what = predicate.toString()) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`still not ${what}: ${JSON.stringify(log)}`)), 15000);
        logged = () => predicate() && (clearTimeout(timer), resolve());
        logged();
      });
    await context.exposeBinding('__recordGtag', (_source, args) => record({ gtag: args }));
    // Defined before the page's own scripts: the bootstrap keeps an existing `gtag`, as Google's snippet does.
    await context.addInitScript(() => {
      window.gtag = (...args) => void window.__recordGtag(args.map((a) => (a instanceof Date ? 'date' : a)));
    });
    const events = () => log.filter((e) => e.gtag?.[0] === 'event');
    const answers = () => log.filter((e) => e.answer);

    const page = await context.newPage();
    page.on('response', (response) => {
      if (response.request().method() === 'POST') record({ answer: response.status() });
    });
    await page.goto(tagged.url);
    await until(() => log.some((e) => e.gtag?.[0] === 'config'));
    assert.deepEqual(
      log.map((e) => e.gtag),
      [
        ['js', 'date'],
        ['config', GA4_ID],
      ],
      'the tag starts on the page load, with no event',
    );
    assert.equal(await page.locator(`script[src="https://www.googletagmanager.com/gtag/js?id=${GA4_ID}"]`).count(), 1);

    // A field error first: the browser's own check stops it, so the action is not even asked.
    await fillLikeAPerson(page, { name: 'Гугл Аналитиков', telegram: '@ga_once', phone: '12345' });
    await page.getByRole('button', { name: 'Отправить заявку' }).click();
    await page.locator('[data-error-for="phone"]').waitFor({ timeout: 5000 });
    await page.getByLabel('Телефон').fill('+7 999 555-88-11');
    await page.getByRole('button', { name: 'Отправить заявку' }).click();
    await page.locator('[data-state="sent"]').waitFor({ timeout: 10000 });
    await until(() => events().length >= 1);
    const first = log.findIndex((e) => e.gtag?.[0] === 'event');
    assert.deepEqual(log[first].gtag, ['event', GOAL]);
    assert.ok(
      log.slice(0, first).some((e) => e.answer === 200),
      'the event comes after the action answered the delivered request',
    );

    // A reload shows the sent screen from memory; then a second request: when its answer arrives, still one event
    // (a reload's event would have come during the page's start, before the form was even filled), then two.
    await page.reload();
    await page.locator('[data-state="sent"]').waitFor({ timeout: 5000 });
    await page.getByRole('link', { name: 'Отправить ещё одну заявку' }).click();
    await fillLikeAPerson(page, { name: 'Гугл Аналитиков', telegram: '@ga_twice', phone: '+7 999 555-88-22' });
    const answersBefore = answers().length;
    await page.getByRole('button', { name: 'Отправить заявку' }).click();
    await until(() => answers().length > answersBefore);
    assert.equal(events().length, 1, 'no event on a reload or before the second answer');
    await until(() => events().length >= 2);
    assert.deepEqual(events().at(-1).gtag, ['event', GOAL]);
    assert.equal(await sentText(page), `Заявка #${leadNumberOf(requestIdOf(posts.at(-1)))} отправлена!`);

    assert.ok(
      outside.length > 0 && outside.every((url) => url === `https://www.googletagmanager.com/gtag/js?id=${GA4_ID}`),
      outside.join(', '),
    );
    await context.close();
  });
});
