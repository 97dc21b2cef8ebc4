// The inbox (docs/inbox.md) in headless Chromium against the built server and the Telegram sandbox, launched as
// Telegram launches a Mini App: the signed launch data in the URL's fragment (and once through window.Telegram.WebApp).
// The list, a filter, a search, a lead's page, a status change that rewrites the card in the sandbox, a conflicting
// change, the CSV, the charts, an erasure; axe-core on the list and a lead's page. Nothing is loaded from outside the
// deployment: every request to another host is recorded and aborted, and the test asserts there was none.
// INBOX_SCREENSHOTS=1 also writes docs/images/inbox-list.png, inbox-lead.png and inbox-charts.png (390×844).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { chromium } from 'playwright-core';
import { DEFAULT_USER, launchUrl, signInitData } from '@stickers/telegram-sandbox';
import { CHROMIUM, CHROMIUM_ARGS, LEADS_CHAT, SECRET, root, startStack, waitUntil } from './stack.mjs';

const TOKEN = '123456789:sandbox-token';
const AXE = createRequire(import.meta.url)('axe-core').source;
const SCREENSHOTS = process.env.INBOX_SCREENSHOTS === '1';
const PHONE = { width: 390, height: 844 };

const LEADS = [
  {
    name: 'Анна Петрова',
    telegram: '@anna_petrova',
    phone: '+79161234501',
    comment: 'Свадьба, 40 гостей',
    source: { landing: 'wedding', utm_source: 'yandex' },
  },
  { name: 'Борис Смирнов', telegram: '@boris_smirnov', phone: '+79161234502', source: { landing: 'corporate' } },
  { name: 'Вера Козлова', telegram: '@vera_kozlova', phone: '+79161234503' },
  { name: 'Глеб Орлов', telegram: '@gleb_orlov', phone: '+79161234504', source: { landing: 'wedding' } },
];

let stack;
let browser;
let context;
let page;
const outside = [];
/** Lead number by name, as the server gave them. */
const numbers = {};

async function postLead(lead, i, expected = 201) {
  const res = await fetch(`${stack.serverUrl}/leads`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-Stickers-Leads-Secret': SECRET },
    body: JSON.stringify({ request_id: randomUUID(), client_ip: `203.0.113.${10 + i}`, ...lead }),
  });
  const text = await res.text();
  assert.equal(res.status, expected, text);
  return JSON.parse(text).lead_number;
}

async function cardOf(number) {
  const state = await stack.state();
  return state.chats
    .find((c) => c.id === LEADS_CHAT)
    .messages.find((m) => m.text.includes(`Заявка #${number}\n`) || m.text.endsWith(`Заявка #${number}`));
}

function initData(user = DEFAULT_USER) {
  return signInitData({ botToken: TOKEN, user });
}

/** A browser context at a phone's size whose requests to anything but the loopback stack are recorded and aborted. */
async function phoneContext(options = {}) {
  const ctx = await browser.newContext({ viewport: PHONE, deviceScaleFactor: 2, locale: 'ru-RU', acceptDownloads: true, ...options });
  await ctx.route(
    (url) => url.hostname !== '127.0.0.1',
    (route) => {
      outside.push(route.request().url());
      return route.abort();
    },
  );
  return ctx;
}

/** The list's lead numbers as shown, once the list has loaded. */
async function shownNumbers() {
  await page.waitForSelector('ol.leads[aria-busy="false"]');
  return page.$$eval('ol.leads .number', (nodes) => nodes.map((n) => Number(n.textContent.replace('#', ''))));
}

/** Runs `action` and waits for the list's request whose query satisfies `matches`, then for the list it fills. */
async function listAfter(action, matches) {
  await Promise.all([
    page.waitForResponse((r) => {
      const url = new URL(r.url());
      return url.pathname === '/inbox/api/leads' && matches(url.searchParams);
    }),
    action(),
  ]);
  return shownNumbers();
}

async function axeViolations() {
  // Through the DevTools protocol: the page's policy (script-src 'self') rightly refuses an inline <script>.
  await page.evaluate(AXE);
  const result = await page.evaluate(() =>
    window.axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } }),
  );
  return result.violations.map((v) => `${v.id}: ${v.help} — ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

async function screenshot(name) {
  if (SCREENSHOTS) await page.screenshot({ path: join(root, 'docs/images', name) });
}

/** Unfolds the list's filters (folded by default) when they are not already. */
async function openFilters(on = page) {
  if (!(await on.locator('details#filters').evaluate((d) => d.open))) await on.locator('details#filters > summary').click();
}

async function openLead(number) {
  await page.click(`ol.leads a[href$="?lead=${number}"]`);
  await page.waitForSelector(`h1:has-text("Заявка #${number}")`);
}

before(async () => {
  stack = await startStack({ serverEnv: { LEADS_IP_LIMIT: '100' } });
  for (const [i, lead] of LEADS.entries()) numbers[lead.name] = await postLead(lead, i);
  await waitUntil(async () => (await Promise.all(Object.values(numbers).map(cardOf))).every(Boolean), 15000, 'the four cards');
  // Anna again, by her username, from another phone and with another comment: a repeat of her lead.
  const repeatOf = await postLead({ ...LEADS[0], phone: '+79035550011', comment: 'Уточнение: 45 гостей' }, 0, 200);
  assert.equal(repeatOf, numbers['Анна Петрова']);
  browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  context = await phoneContext();
  page = await context.newPage();
});

after(async () => {
  await browser?.close();
  await stack?.stop();
});

describe('the inbox launched through the URL fragment', () => {
  it('shows every lead, newest first, and takes the launch data off the address', async () => {
    await page.goto(launchUrl(`${stack.serverUrl}/inbox`, initData()));
    const shown = await shownNumbers();
    assert.deepEqual(
      shown,
      Object.values(numbers).sort((a, b) => b - a),
    );
    assert.equal(new URL(page.url()).hash, '');
    const anna = page.locator(`ol.leads a[href$="?lead=${numbers['Анна Петрова']}"]`);
    assert.match(await anna.innerText(), /Анна Петрова · @anna_petrova · \+7\u00a0916\u00a0123\u00a045\u00a001/);
    assert.match(await anna.innerText(), /🆕 Новая/);
    await screenshot('inbox-list.png');
  });

  it('has no WCAG 2.1 AA violation on the list', async () => {
    assert.deepEqual(await axeViolations(), []);
  });

  it('folds the filters past the search, so the leads start on the first screen; the fold counts the filters on', async () => {
    const filters = page.locator('details#filters');
    assert.equal(await filters.evaluate((d) => d.open), false);
    assert.equal(await page.locator('details#filters > summary').innerText(), 'Фильтры');
    assert.equal(await page.getByLabel('Статус').isVisible(), false);
    assert.equal(await page.getByLabel('Поиск').isVisible(), true);
    const form = await page.locator('form.filters').boundingBox();
    const first = await page.locator('ol.leads li').first().boundingBox();
    // The folded form is the search and one line; the first lead shows whole in the first screen.
    assert.ok(form.y + form.height < PHONE.height / 3, `the filters end at ${form.y + form.height}px of ${PHONE.height}`);
    assert.ok(first.y + first.height <= PHONE.height, `the first lead ends at ${first.y + first.height}px`);
  });

  it('filters by source', async () => {
    await openFilters();
    const shown = await listAfter(
      async () => {
        await page.getByLabel('Источник').fill('wedding');
        await page.getByLabel('Источник').press('Enter');
      },
      (q) => q.get('source') === 'wedding',
    );
    assert.deepEqual(shown, [numbers['Глеб Орлов'], numbers['Анна Петрова']]);
    // The list redrew for the filter; the fold stayed open and counts it.
    assert.equal(await page.locator('details#filters').evaluate((d) => d.open), true);
    assert.equal(await page.locator('details#filters > summary').innerText(), 'Фильтры (1)');
  });

  it('searches by name, and by number within the filter reset', async () => {
    await listAfter(
      () => page.getByRole('button', { name: 'Сбросить' }).click(),
      (q) => q.size === 0,
    );
    const byName = await listAfter(
      () => page.getByLabel('Поиск').fill('козлова'),
      (q) => q.get('q') === 'козлова',
    );
    assert.deepEqual(byName, [numbers['Вера Козлова']]);
    const number = numbers['Борис Смирнов'];
    const byNumber = await listAfter(
      () => page.getByLabel('Поиск').fill(`#${number}`),
      (q) => q.get('q') === `#${number}`,
    );
    assert.deepEqual(byNumber, [number]);
    const byPhone = await listAfter(
      () => page.getByLabel('Поиск').fill('234501'),
      (q) => q.get('q') === '234501',
    );
    assert.deepEqual(byPhone, [numbers['Анна Петрова']]);
  });

  it("shows a lead's page: its fields, source, consent, events and the link to its card", async () => {
    const number = numbers['Анна Петрова'];
    await openLead(number);
    const fields = await page.$$eval('dl.fields', (lists) =>
      lists.map((dl) =>
        Object.fromEntries([...dl.querySelectorAll('dt')].map((dt) => [dt.textContent, dt.nextElementSibling.textContent])),
      ),
    );
    assert.equal(fields[0]['Имя'], 'Анна Петрова');
    assert.equal(fields[0]['Telegram'], '@anna_petrova');
    assert.equal(fields[0]['Телефон'], '+7 916 123 45 01');
    assert.equal(fields[0]['Комментарий'], 'Свадьба, 40 гостей');
    assert.equal(fields[1]['Лендинг'], 'wedding');
    assert.equal(fields[1]['utm_source'], 'yandex');
    const card = await cardOf(number);
    const link = page.getByRole('link', { name: 'Открыть карточку в группе' });
    assert.equal(await link.getAttribute('href'), `https://t.me/c/${String(LEADS_CHAT).slice(4)}/${card.message_id}`);
    // The links alone on their line are targets a thumb hits, 44 px tall, not their line of text.
    for (const alone of [link, page.getByRole('link', { name: /К списку/ })]) {
      const { height } = await alone.boundingBox();
      assert.ok(height >= 44, `${await alone.innerText()}: ${height} px tall`);
    }
    await screenshot('inbox-lead.png');
  });

  it("reaches the person from a lead's page: the phone as a tel: link, the username as a t.me link", async () => {
    const phone = page.locator('dl.fields').first().getByRole('link', { name: '+7 916 123 45 01' });
    assert.equal(await phone.getAttribute('href'), 'tel:+79161234501');
    const username = page.locator('dl.fields').first().getByRole('link', { name: '@anna_petrova' });
    assert.equal(await username.getAttribute('href'), 'https://t.me/anna_petrova');
    // Outside Telegram a t.me link opens beside the inbox; inside, Telegram's openTelegramLink takes it (below).
    assert.equal(await username.getAttribute('target'), '_blank');
  });

  it("words a lead's events from the catalogue, not the trace's developer details", async () => {
    const events = await page.locator('section:has(h2:text-is("События")) li').allInnerTexts();
    assert.ok(
      events.some((e) => e.endsWith(' · Карточка опубликована в группе')),
      events.join('\n'),
    );
    for (const e of events) assert.doesNotMatch(e, /chat -?\d|message \d|status [a-z_]+|published|repeat_/);
  });

  it('shows a repeat as the card does: when, what changed with its values, and which contact alone matched', async () => {
    const repeat = page.locator('section:has(h2:text-is("Повторы")) ul.repeats > li');
    assert.equal(await repeat.count(), 1);
    const text = await repeat.innerText();
    assert.match(text, /^🔁 Повторное обращение: /);
    assert.match(text, /Комментарий\s+Уточнение: 45 гостей/);
    assert.match(text, /⚠️ другой телефон — совпал только ник в Telegram/);
    assert.equal(await repeat.getByRole('link', { name: '+7 903 555 00 11' }).getAttribute('href'), 'tel:+79035550011');
  });

  it("has no WCAG 2.1 AA violation on a lead's page", async () => {
    assert.deepEqual(await axeViolations(), []);
  });

  it('changes the status after a confirmation, and the card in the group is rewritten', async () => {
    const number = numbers['Анна Петрова'];
    await page.getByRole('button', { name: 'В работу' }).click();
    const dialog = page.getByRole('dialog');
    assert.match(await dialog.innerText(), new RegExp(`Заявка #${number}: «🛠 В работе»\\?`));
    const [res] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith(`/inbox/api/leads/${number}/status`) && r.request().method() === 'POST'),
      dialog.getByRole('button', { name: 'Подтвердить' }).click(),
    ]);
    assert.equal(res.status(), 200);
    assert.deepEqual(JSON.parse(res.request().postData()), { status: 'in_progress', expected: 'new' });
    await page.waitForSelector('h1 .badge.status-in_progress');
    assert.match(await page.locator('#lead-note').innerText(), /Статус изменён: 🛠 В работе/);
    assert.match(await page.locator('section:has(h2:text-is("История статусов"))').innerText(), /🛠 В работе — Мария/);
    const card = await waitUntil(
      async () => {
        const c = await cardOf(number);
        return c?.text.includes('Статус: 🛠 В работе') ? c : null;
      },
      15000,
      'the card rewritten to in work',
    );
    assert.deepEqual(
      card.reply_markup.inline_keyboard
        .flat()
        .filter((b) => b.callback_data)
        .map((b) => b.text),
      ['Заказ', 'Отказ', 'Спам'],
    );
  });

  it('asks again and changes nothing when the confirmation is cancelled', async () => {
    const requests = [];
    const record = (r) => r.method() === 'POST' && requests.push(r.url());
    page.on('request', record);
    await page.getByRole('button', { name: 'Заказ' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Отмена' }).click();
    await page.getByRole('dialog').waitFor({ state: 'detached' });
    page.off('request', record);
    assert.deepEqual(requests, []);
    assert.equal(await page.locator('h1 .badge.status-in_progress').count(), 1);
  });

  it('keeps the launch across a reload (the fragment is gone: sessionStorage has it)', async () => {
    await page.reload();
    await page.waitForSelector(`h1:has-text("Заявка #${numbers['Анна Петрова']}") .badge.status-in_progress`);
  });

  it('filters by status', async () => {
    await page.getByRole('link', { name: /К списку/ }).click();
    await shownNumbers();
    await openFilters();
    const shown = await listAfter(
      () => page.getByLabel('Статус').selectOption('in_progress'),
      (q) => q.get('status') === 'in_progress',
    );
    assert.deepEqual(shown, [numbers['Анна Петрова']]);
  });

  it('keeps the filters unfolded when one changes as they unfold, before their toggle event', async () => {
    // Folded, and the page has heard so.
    await page.locator('details#filters').evaluate(
      (d) =>
        new Promise((resolve) => {
          if (!d.open) return resolve();
          d.addEventListener('toggle', resolve, { once: true });
          d.open = false;
        }),
    );
    // Unfolded and any status chosen in one task: the list redraws before the details' toggle event.
    await listAfter(
      () =>
        page.evaluate(() => {
          document.querySelector('details#filters > summary').click();
          const status = document.querySelector('#f-status');
          status.value = '';
          status.dispatchEvent(new Event('change'));
        }),
      (q) => !q.has('status'),
    );
    assert.equal(await page.locator('details#filters').evaluate((d) => d.open), true);
    // Back to the leads in work, as the next steps take them.
    await listAfter(
      () => page.getByLabel('Статус').selectOption('in_progress'),
      (q) => q.get('status') === 'in_progress',
    );
  });

  it('downloads the CSV of the current filter with the launch data in the Authorization header', async () => {
    const [request, download] = await Promise.all([
      page.waitForRequest((r) => new URL(r.url()).pathname === '/inbox/api/leads.csv'),
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Скачать CSV' }).click(),
    ]);
    assert.match(request.headers().authorization, /^tma auth_date=/);
    assert.equal(new URL(request.url()).searchParams.get('status'), 'in_progress');
    const csv = readFileSync(await download.path(), 'utf8');
    assert.match(csv, /Анна Петрова/);
    assert.doesNotMatch(csv, /Борис Смирнов|Вера Козлова|Глеб Орлов/);
  });

  it('says so when someone else changed the status first (compare-and-set)', async () => {
    const number = numbers['Борис Смирнов'];
    await listAfter(
      () => page.getByRole('button', { name: 'Сбросить' }).click(),
      (q) => q.size === 0,
    );
    await openLead(number);
    // Meanwhile another manager marks it as spam.
    const res = await fetch(`${stack.serverUrl}/inbox/api/leads/${number}/status`, {
      method: 'POST',
      headers: { Authorization: `tma ${initData()}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ status: 'spam', expected: 'new' }),
    });
    assert.equal(res.status, 200);
    await page.getByRole('button', { name: 'В работу' }).click();
    const [answer] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith(`/inbox/api/leads/${number}/status`)),
      page.getByRole('dialog').getByRole('button', { name: 'Подтвердить' }).click(),
    ]);
    assert.equal(answer.status(), 409);
    await page.waitForSelector('h1 .badge.status-spam');
    // Said without guessing who: the same manager in another tab gets it too.
    assert.equal(await page.locator('#lead-note').innerText(), 'Статус уже изменён: сейчас «🚫 Спам». Проверьте и повторите.');
    assert.equal(await page.getByRole('button', { name: 'Не спам' }).count(), 1);
  });

  it("erases a lead's personal data after a confirmation (a manager)", async () => {
    const number = numbers['Глеб Орлов'];
    await page.getByRole('link', { name: /К списку/ }).click();
    await shownNumbers();
    await openLead(number);
    await page.getByRole('button', { name: 'Удалить персональные данные' }).click();
    const [res] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith(`/inbox/api/leads/${number}/erase`)),
      page.getByRole('dialog').getByRole('button', { name: 'Подтвердить' }).click(),
    ]);
    assert.equal(res.status(), 200);
    await page.waitForSelector('#lead-note:has-text("Персональные данные удалены")');
    const name = await page.$eval('dl.fields dt:text-is("Имя") + dd', (dd) => dd.textContent);
    assert.equal(name, 'удалено');
    assert.equal(await page.getByRole('button', { name: 'Удалить персональные данные' }).count(), 0);
    // Nor status buttons: an erased card has none, and the API refuses its every change; nor their heading.
    assert.equal(await page.locator('button[data-status]').count(), 0);
    assert.equal(await page.getByRole('heading', { name: 'Сменить статус' }).count(), 0);
    // Its conversation went with it: the page says so, not that the visitor has yet to open the bot.
    assert.match(await page.locator('#conversation-erased').innerText(), /^Удалена вместе с данными заявки/);
    assert.equal(await page.locator('#conversation-text, .messages').count(), 0);
    // In the list it says why it names nobody.
    await page.getByRole('link', { name: /К списку/ }).click();
    await shownNumbers();
    const row = page.locator('ol.leads li', { has: page.locator('.number', { hasText: new RegExp(`^#${number}$`) }) });
    assert.equal(await row.locator('.who').innerText(), '— (персональные данные удалены)');
  });

  it('shows the charts: leads per day by source, the leads by their status now and the median time to the first change', async () => {
    await Promise.all([
      page.waitForResponse((r) => new URL(r.url()).pathname === '/inbox/api/charts'),
      page.getByRole('link', { name: 'Графики' }).click(),
    ]);
    await page.waitForSelector('#median');
    assert.equal(await page.locator('.chart-box svg').count(), 2);
    // Each lead once, where it stands now: no funnel, whose steps would each count the leads that passed them.
    assert.deepEqual((await page.locator('main h2').allInnerTexts()).slice(0, 2), [
      'Заявки по дням за 30 дней, по источникам',
      'Заявки по статусу сейчас',
    ]);
    const legend = await page.locator('.legend li').allInnerTexts();
    assert.deepEqual([...legend].sort(), ['Без источника: 1', 'corporate: 1', 'wedding: 2'].sort());
    // Two leads changed status once each: the median is a duration, not "no change yet".
    assert.doesNotMatch(await page.locator('#median').innerText(), /нет/);
    await screenshot('inbox-charts.png');
  });

  it('loaded nothing from outside the deployment', () => {
    assert.deepEqual(outside, []);
  });
});

describe('the inbox opened without launch data, or refused', () => {
  it("in development (the server talks to the local sandbox) points to the sandbox page's launch links, in LEADS_LOCALE's language whatever the phone's", async () => {
    const ctx = await phoneContext({ locale: 'en-US' });
    const bare = await ctx.newPage();
    try {
      await bare.goto(`${stack.serverUrl}/inbox`);
      await bare.waitForSelector('#sandbox-hint');
      assert.match(
        await bare.getByRole('alert').innerText(),
        /Откройте эту страницу из Telegram: отправьте \/stickers_inbox в личный чат с ботом/,
      );
      assert.match(await bare.locator('#sandbox-hint').innerText(), /«открыть инбокс как …»/);
      assert.equal(await bare.getByRole('link', { name: 'Страница песочницы' }).getAttribute('href'), `${stack.sandboxUrl}/`);
    } finally {
      await ctx.close();
    }
  });

  it('says that Telegram could not confirm the membership (503 membership_unknown), not that the token is missing', async () => {
    const faults = (path, body = {}) =>
      fetch(`${stack.sandboxUrl}/sandbox/api/${path}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      });
    assert.equal((await faults('faults', { method: 'getChatMember', kind: 'server_error', count: 100 })).status, 200);
    const ctx = await phoneContext();
    const refused = await ctx.newPage();
    try {
      // A user the server has not asked about yet, so no cached answer lets them in.
      await refused.goto(launchUrl(`${stack.serverUrl}/inbox`, initData({ id: 4242, is_bot: false, first_name: 'Новый' })));
      const alert = refused.locator('.problem[role="alert"]');
      await alert.waitFor();
      assert.match(await alert.innerText(), /Telegram сейчас не ответил, состоите ли вы в группе заявок/);
    } finally {
      await ctx.close();
      await faults('faults/clear');
    }
  });
});

describe('the inbox launched through window.Telegram.WebApp', () => {
  it("uses the host's launch data and theme, says ready, and confirms with Telegram's showConfirm", async () => {
    const ctx = await phoneContext();
    const tgPage = await ctx.newPage();
    await tgPage.addInitScript((data) => {
      window.__calls = [];
      window.Telegram = {
        WebApp: {
          initData: data,
          themeParams: { bg_color: '#ffffff', text_color: '#222222', button_color: '#3390ec', button_text_color: '#ffffff' },
          platform: 'android',
          version: '8.0',
          ready: () => window.__calls.push('ready'),
          expand: () => window.__calls.push('expand'),
          openTelegramLink: (url) => window.__calls.push(`link:${url}`),
          showConfirm: (message, callback) => {
            window.__calls.push(`confirm:${message}`);
            callback(true);
          },
          BackButton: {
            show: () => window.__calls.push('back:show'),
            hide: () => window.__calls.push('back:hide'),
            onClick: () => undefined,
            offClick: () => undefined,
          },
        },
      };
    }, initData());
    try {
      await tgPage.goto(`${stack.serverUrl}/inbox`);
      await tgPage.waitForSelector('ol.leads[aria-busy="false"]');
      const bg = await tgPage.evaluate(() => getComputedStyle(document.documentElement).getPropertyValue('--tg-theme-bg-color').trim());
      assert.equal(bg, '#ffffff');
      const number = numbers['Вера Козлова'];
      await tgPage.click(`ol.leads a[href$="?lead=${number}"]`);
      await tgPage.waitForSelector(`h1:has-text("Заявка #${number}")`);
      // The username's link opens the chat through Telegram, the inbox staying where it is.
      await tgPage.getByRole('link', { name: '@vera_kozlova' }).click();
      assert.equal(new URL(tgPage.url()).search, `?lead=${number}`);
      await Promise.all([
        tgPage.waitForResponse((r) => r.url().endsWith(`/inbox/api/leads/${number}/status`)),
        tgPage.getByRole('button', { name: 'Спам' }).click(),
      ]);
      await tgPage.waitForSelector('h1 .badge.status-spam');
      const calls = await tgPage.evaluate(() => window.__calls);
      assert.deepEqual(calls.slice(0, 2), ['ready', 'expand']);
      assert.ok(calls.includes(`confirm:Заявка #${number}: «🚫 Спам»?`), calls.join('\n'));
      assert.ok(calls.includes('link:https://t.me/vera_kozlova'), calls.join('\n'));
      assert.ok(calls.includes('back:show'));
      assert.equal(await tgPage.locator('dialog').count(), 0);
    } finally {
      await ctx.close();
    }
  });

  it("takes Telegram's back button to the list from a lead the page was opened (or reloaded) on", async () => {
    const ctx = await phoneContext();
    const tgPage = await ctx.newPage();
    await tgPage.addInitScript((data) => {
      window.Telegram = {
        WebApp: {
          initData: data,
          themeParams: {},
          BackButton: {
            show: () => undefined,
            hide: () => undefined,
            onClick: (handler) => (window.__back = handler),
            offClick: () => undefined,
          },
        },
      };
    }, initData());
    try {
      const number = numbers['Вера Козлова'];
      await tgPage.goto(`${stack.serverUrl}/inbox?lead=${number}`);
      await tgPage.waitForSelector(`h1:has-text("Заявка #${number}")`);
      await tgPage.evaluate(() => window.__back());
      await tgPage.waitForSelector('ol.leads[aria-busy="false"]');
      assert.equal(new URL(tgPage.url()).pathname, '/inbox');
      // Opened from the list, the lead goes back to the list the manager left, filter included.
      await tgPage.goto(`${stack.serverUrl}/inbox?q=козлова`);
      await tgPage.click(`ol.leads a[href$="?lead=${number}"]`);
      await tgPage.waitForSelector(`h1:has-text("Заявка #${number}")`);
      await tgPage.evaluate(() => window.__back());
      await tgPage.waitForSelector('ol.leads[aria-busy="false"]');
      assert.equal(new URL(tgPage.url()).searchParams.get('q'), 'козлова');
    } finally {
      await ctx.close();
    }
  });
});

describe('the inbox of a server with LEADS_CARD_PII=0, LEADS_MANAGER_IDS of someone else and more than a page of leads', () => {
  let hidden;
  after(async () => {
    await hidden?.stop();
  });

  it('shows personal values as hidden, in the list and on the lead; to a member not listed, no buttons and no answer box', async () => {
    hidden = await startStack({
      serverEnv: { LEADS_CARD_PII: '0', LEADS_IP_LIMIT: '100', LEADS_HOURLY_LIMIT: '200', LEADS_MANAGER_IDS: String(DEFAULT_USER.id + 1) },
    });
    const res = await fetch(`${hidden.serverUrl}/leads`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Stickers-Leads-Secret': SECRET },
      body: JSON.stringify({
        request_id: randomUUID(),
        name: 'Дина Скрытая',
        telegram: '@dina_hidden',
        phone: '+79161234599',
        source: { landing: 'wedding' },
      }),
    });
    assert.equal(res.status, 201);
    const { lead_number: number } = await res.json();
    const ctx = await phoneContext();
    const hiddenPage = await ctx.newPage();
    try {
      await hiddenPage.goto(launchUrl(`${hidden.serverUrl}/inbox`, initData()));
      await hiddenPage.waitForSelector('ol.leads[aria-busy="false"]');
      const row = await hiddenPage.locator(`ol.leads a[href$="?lead=${number}"]`).innerText();
      assert.match(row, /скрыто/);
      assert.doesNotMatch(row, /Дина|dina_hidden|234599/);
      await hiddenPage.click(`ol.leads a[href$="?lead=${number}"]`);
      await hiddenPage.waitForSelector(`h1:has-text("Заявка #${number}")`);
      const fields = await hiddenPage.$$eval('dl.fields', (lists) =>
        lists.map((dl) =>
          Object.fromEntries([...dl.querySelectorAll('dt')].map((dt) => [dt.textContent, dt.nextElementSibling.textContent])),
        ),
      );
      assert.equal(fields[0]['Имя'], 'скрыто');
      assert.equal(fields[0]['Телефон'], 'скрыто');
      assert.equal(fields[1]['Лендинг'], 'wedding');
      assert.doesNotMatch(await hiddenPage.locator('main').innerText(), /Дина|dina_hidden|234599/);
      // The group's creator, not in LEADS_MANAGER_IDS: may look, may not change (the API would answer 403).
      await hiddenPage.waitForSelector('#conversation-note', { state: 'attached' });
      assert.equal(
        await hiddenPage.locator('#may-not-change').innerText(),
        'Менять статус и писать клиенту могут только менеджеры (LEADS_MANAGER_IDS).',
      );
      assert.equal(await hiddenPage.locator('[data-status], #erase, #conversation-text').count(), 0);
    } finally {
      await ctx.close();
    }
  });
  it('pages like GET /leads: 50 leads, then the next page with "Показать ещё"', async () => {
    for (let i = 0; i < 50; i += 1) {
      const res = await fetch(`${hidden.serverUrl}/leads`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-Stickers-Leads-Secret': SECRET },
        body: JSON.stringify({
          request_id: randomUUID(),
          client_ip: `198.51.100.${i + 1}`,
          name: `Гость ${i}`,
          telegram: `@pager_guest_${i}`,
          phone: `+7916555${String(1000 + i)}`,
        }),
      });
      assert.equal(res.status, 201, await res.text());
    }
    const ctx = await phoneContext();
    const pager = await ctx.newPage();
    try {
      await pager.goto(launchUrl(`${hidden.serverUrl}/inbox`, initData()));
      await pager.waitForSelector('ol.leads[aria-busy="false"]');
      const first = await pager.$$eval('ol.leads .number', (nodes) => nodes.map((n) => Number(n.textContent.replace('#', ''))));
      assert.equal(first.length, 50);
      assert.equal(first[0], 51);
      assert.match(await pager.locator('#count').innerText(), /есть ещё/);
      const [res] = await Promise.all([
        pager.waitForResponse((r) => new URL(r.url()).pathname === '/inbox/api/leads' && new URL(r.url()).searchParams.has('cursor')),
        pager.getByRole('button', { name: 'Показать ещё' }).click(),
      ]);
      assert.equal(res.status(), 200);
      await pager.waitForSelector('ol.leads[aria-busy="false"] li:nth-child(51)');
      const all = await pager.$$eval('ol.leads .number', (nodes) => nodes.map((n) => Number(n.textContent.replace('#', ''))));
      assert.deepEqual(
        all,
        Array.from({ length: 51 }, (_, i) => 51 - i),
      );
      assert.equal(await pager.getByRole('button', { name: 'Показать ещё' }).count(), 0);
    } finally {
      await ctx.close();
    }
  });
});

describe('the inbox charts of more sources than colours', () => {
  let many;
  after(async () => {
    await many?.stop();
  });

  it('past six sources the smallest are one "others" entry, in the legend as in the chart; the source list keeps them all', async () => {
    many = await startStack({ serverEnv: { LEADS_IP_LIMIT: '100' } });
    const landings = ['l1', 'l1', 'l1', 'l2', 'l3', 'l4', 'l5', 'l6', 'l7'];
    for (const [i, landing] of landings.entries()) {
      const res = await fetch(`${many.serverUrl}/leads`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-Stickers-Leads-Secret': SECRET },
        body: JSON.stringify({
          request_id: randomUUID(),
          name: `Источник ${landing}`,
          telegram: `@source_${i}`,
          phone: `+7916123450${i}`,
          source: { landing },
        }),
      });
      assert.equal(res.status, 201);
    }
    const ctx = await phoneContext();
    const charts = await ctx.newPage();
    try {
      await charts.goto(launchUrl(`${many.serverUrl}/inbox?view=charts`, initData()));
      await charts.waitForSelector('#median');
      assert.deepEqual(await charts.locator('.legend li').allInnerTexts(), ['l1: 3', 'l2: 1', 'l3: 1', 'l4: 1', 'l5: 1', 'Другие (2): 2']);
      const classes = await charts.$$eval('.legend .swatch', (swatches) => swatches.map((s) => s.className));
      assert.deepEqual(classes, ['swatch s0', 'swatch s1', 'swatch s2', 'swatch s3', 'swatch s4', 'swatch s5']);
      const bars = await charts.$$eval('.chart.per-day .bar', (rects) => [...new Set(rects.map((r) => r.getAttribute('class')))]);
      assert.deepEqual(bars.sort(), ['bar s0', 'bar s1', 'bar s2', 'bar s3', 'bar s4', 'bar s5']);
      const sources = await charts.$$eval('#c-source option', (options) => options.map((o) => o.value));
      assert.deepEqual(sources, ['', 'l1', 'l2', 'l3', 'l4', 'l5', 'l6', 'l7']);
      // On a phone the charts' words are read at 11 px or more: their font size times the drawing's scale.
      const fonts = await charts.$$eval('svg.chart', (svgs) =>
        svgs.map((svg) => {
          const size = parseFloat(getComputedStyle(svg.querySelector('text')).fontSize);
          return (size * svg.getBoundingClientRect().width) / svg.viewBox.baseVal.width;
        }),
      );
      assert.equal(fonts.length, 2);
      for (const px of fonts) assert.ok(px >= 11, `chart text at ${px.toFixed(1)} px`);
    } finally {
      await ctx.close();
    }
  });
});

describe('the inbox while the manager moves on', () => {
  let own;
  let ctx;
  before(async () => {
    // A phone in another zone than the server's LEADS_TIMEZONE (Europe/Moscow).
    ctx = await phoneContext({ timezoneId: 'Asia/Vladivostok' });
    own = await ctx.newPage();
    await own.goto(launchUrl(`${stack.serverUrl}/inbox`, initData()));
    await own.waitForSelector('ol.leads[aria-busy="false"]');
  });
  after(() => ctx?.close());

  /** Waits for the list's request whose `q` is `q`, and for the list it fills. */
  const searched = (q) =>
    own.waitForResponse((r) => new URL(r.url()).pathname === '/inbox/api/leads' && new URL(r.url()).searchParams.get('q') === q);

  it('keeps what the manager types when the list redraws between two keystrokes', async () => {
    await own.getByLabel('Поиск').click();
    await Promise.all([searched('Ан'), own.keyboard.type('Ан')]);
    await own.waitForSelector('ol.leads[aria-busy="false"]');
    // The search redrew with the list: the next letters go after the first ones.
    await Promise.all([searched('Анна'), own.keyboard.type('на')]);
    assert.equal(await own.getByLabel('Поиск').inputValue(), 'Анна');
    assert.deepEqual(await own.$$eval('ol.leads .number', (n) => n.map((x) => Number(x.textContent.replace('#', '')))), [
      numbers['Анна Петрова'],
    ]);
  });

  it('says that a period starting after it ends is reversed, and asks the API nothing', async () => {
    const asked = [];
    const record = (r) => new URL(r.url()).pathname === '/inbox/api/leads' && asked.push(r.url());
    own.on('request', record);
    await own.goto(`${stack.serverUrl}/inbox?since=2026-12-06&until=2026-12-01`);
    await own.waitForSelector('#count:has-text("Период начинается позже")');
    own.off('request', record);
    assert.deepEqual(asked, []);
    assert.equal(await own.getByRole('alert').count(), 0);
  });

  it("stays on a lead opened within the search's pause", async () => {
    const clocked = await ctx.newPage();
    await clocked.clock.install();
    await clocked.goto(launchUrl(`${stack.serverUrl}/inbox`, initData()));
    await clocked.waitForSelector('ol.leads[aria-busy="false"]');
    const number = numbers['Анна Петрова'];
    // The page's timers wait for the test from here on.
    await clocked.clock.pauseAt(Date.now() + 60_000);
    await clocked.getByLabel('Поиск').fill('Анна');
    await clocked.click(`ol.leads a[href$="?lead=${number}"]`);
    await clocked.waitForSelector(`h1:has-text("Заявка #${number}")`);
    // The search's 0.4 s pause ends on the lead's page.
    await clocked.clock.runFor(1000);
    assert.equal(new URL(clocked.url()).search, `?lead=${number}`);
    assert.match(await clocked.locator('h1').innerText(), new RegExp(`Заявка #${number}`));
    await clocked.close();
  });

  it("sends the search at Enter (the keyboard's search key), without waiting for the pause", async () => {
    const clocked = await ctx.newPage();
    await clocked.clock.install();
    await clocked.goto(launchUrl(`${stack.serverUrl}/inbox`, initData()));
    await clocked.waitForSelector('ol.leads[aria-busy="false"]');
    // The page's timers wait for the test from here on: only Enter can send the search.
    await clocked.clock.pauseAt(Date.now() + 60_000);
    await clocked.getByLabel('Поиск').fill('козлова');
    await Promise.all([
      clocked.waitForResponse((r) => new URL(r.url()).searchParams.get('q') === 'козлова'),
      clocked.getByLabel('Поиск').press('Enter'),
    ]);
    await clocked.close();
  });

  it('names the filter the API refuses (a source that is no landing name), not the connection', async () => {
    const [answer] = await Promise.all([
      own.waitForResponse((r) => new URL(r.url()).pathname === '/inbox/api/leads'),
      own.goto(`${stack.serverUrl}/inbox?source=${encodeURIComponent('Свадьба 2026')}`),
    ]);
    assert.equal(answer.status(), 422);
    const said = await own.waitForSelector('#invalid-filter');
    assert.match(await said.innerText(), /проверьте «Источник» или нажмите «Сбросить»/);
    assert.equal(await own.locator('ol.leads').getAttribute('aria-busy'), 'false');
    // A search longer than the API takes cannot be typed.
    assert.equal(await own.getByLabel('Поиск').getAttribute('maxlength'), '100');
  });

  it('asks for the next page once when "Показать ещё" is pressed twice', async () => {
    const cursors = [];
    let release;
    const held = new Promise((r) => (release = r));
    await own.route(/\/inbox\/api\/leads\?/, async (route) => {
      const cursor = new URL(route.request().url()).searchParams.get('cursor');
      if (!cursor) {
        // The first page as the server answers it, with a next page to ask for.
        const answer = await route.fetch();
        return route.fulfill({ response: answer, json: { ...(await answer.json()), next_cursor: 'next' } });
      }
      cursors.push(cursor);
      await held;
      return route.fulfill({ json: { leads: [], next_cursor: null } });
    });
    try {
      await own.goto(`${stack.serverUrl}/inbox`);
      await own.waitForSelector('ol.leads[aria-busy="false"]');
      const shown = await own.locator('ol.leads .number').count();
      assert.ok(shown > 0);
      const more = own.getByRole('button', { name: 'Показать ещё' });
      await Promise.all([own.waitForRequest((r) => r.url().includes('cursor=next')), more.dblclick()]);
      release();
      await own.waitForSelector('#count:not(:has-text("есть ещё"))');
      assert.deepEqual(cursors, ['next']);
      assert.equal(await own.locator('ol.leads .number').count(), shown);
    } finally {
      await own.unroute(/\/inbox\/api\/leads\?/);
    }
  });

  it('stays on the list when a status change is answered after the manager went back', async () => {
    // A lead of its own: the suites above change the others' statuses.
    const number = await postLead({ name: 'Дина Лебедева', telegram: '@dina_lebedeva', phone: '+79161234505' }, 5);
    await waitUntil(() => cardOf(number), 15000, 'its card');
    await own.goto(`${stack.serverUrl}/inbox`);
    await own.waitForSelector('ol.leads[aria-busy="false"]');
    await own.click(`ol.leads a[href$="?lead=${number}"]`);
    await own.waitForSelector(`h1:has-text("Заявка #${number}")`);
    let release;
    const held = new Promise((r) => (release = r));
    const path = `/inbox/api/leads/${number}/status`;
    await own.route(`**${path}`, async (route) => {
      await held;
      await route.continue();
    });
    try {
      await Promise.all([
        own.waitForRequest((r) => r.url().endsWith(path)),
        (async () => {
          await own.getByRole('button', { name: 'В работу' }).click();
          await own.getByRole('dialog').getByRole('button', { name: 'Подтвердить' }).click();
        })(),
      ]);
      await own.goBack();
      await own.waitForSelector('ol.leads[aria-busy="false"]');
      release();
      const answer = await own.waitForResponse((r) => r.url().endsWith(path));
      assert.equal(answer.status(), 200);
      // Whatever the page asks next has been answered: the lead's page would have been drawn by then.
      await own.waitForLoadState('networkidle');
      assert.equal(new URL(own.url()).search, '');
      assert.equal(await own.locator('h1').first().innerText(), 'Заявки');
    } finally {
      await own.unroute(`**${path}`);
    }
  });

  it("shows a lead's time in LEADS_TIMEZONE, written as its card writes it, whatever the phone's zone", async () => {
    const number = numbers['Борис Смирнов'];
    const card = await cardOf(number);
    const [, date, at] = /🕒 (\d\d\.\d\d\.\d{4}) (\d\d:\d\d)/.exec(card.text);
    await own.goto(`${stack.serverUrl}/inbox?q=${encodeURIComponent(`#${number}`)}`);
    await own.waitForSelector('ol.leads[aria-busy="false"]');
    assert.match(await own.locator('ol.leads .meta').first().innerText(), new RegExp(`^${date} ${at}`));
  });

  it('says a lead that does not exist does not, with no button to try again (trying cannot help)', async () => {
    await own.goto(`${stack.serverUrl}/inbox?lead=999999`);
    const alert = own.getByRole('alert');
    await alert.waitFor();
    assert.equal(await alert.innerText(), 'Такой заявки нет.');
    assert.equal(await own.getByRole('button', { name: 'Повторить' }).count(), 0);
    assert.equal(await own.getByRole('link', { name: /К списку/ }).count(), 1);
  });
});
