// Which contacts are required and the consent box, in headless Chromium against the built landing, the real server
// (LEADS_REQUIRED_CONTACTS=any on both sides, LEADS_REQUIRE_CONSENT=1, LANDING_PRIVACY_URL) and the Telegram sandbox:
// an unticked box is a field error with the values kept, with and without JavaScript; a ticked one is stored with the
// lead, shown by GET /leads and the CSV, and kept when the lead is erased (the CLI's forget).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { chromium } from 'playwright-core';
import { afterFillTime, CHROMIUM, CHROMIUM_ARGS, root, SECRET, startStack, waitUntil } from './stack.mjs';

const POLICY = 'https://stickers.example/privacy';
let stack;
let browser;

before(async () => {
  stack = await startStack({
    serverEnv: { LEADS_REQUIRED_CONTACTS: 'any', LEADS_REQUIRE_CONSENT: '1' },
    landingEnv: { LEADS_REQUIRED_CONTACTS: 'any', LANDING_PRIVACY_URL: POLICY },
  });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
});
after(async () => {
  await browser?.close();
  await stack?.stop();
});

const api = async (path) => {
  const res = await fetch(`${stack.serverUrl}${path}`, { headers: { 'X-Stickers-Leads-Secret': SECRET } });
  return res.text();
};
const listed = async (name) => JSON.parse(await api('/leads?limit=200')).leads.find((l) => l.name === name);
/** The CSV's row of a lead by number, as an object by header (no value in this file holds a comma or a quote). */
async function csvRow(number) {
  const [header, ...lines] = (await api('/leads/export.csv'))
    .replace(/^\uFEFF/, '')
    .trim()
    .split(/\r?\n/);
  const names = header.split(',');
  const line = lines.find((l) => l.startsWith(`${number},`));
  return line && Object.fromEntries(line.split(',').map((v, i) => [names[i], v]));
}

async function fill(page, { name, telegram, phone }) {
  await page.getByLabel('Имя').pressSequentially(name, { delay: 20 });
  if (telegram) await page.getByLabel('Ник в Telegram').pressSequentially(telegram, { delay: 20 });
  if (phone) await page.getByLabel('Телефон').pressSequentially(phone, { delay: 20 });
  await afterFillTime(page);
}

describe('required contacts and consent in a browser', () => {
  it('the box: a real required checkbox with its label and the policy link; contacts are not required one by one', async () => {
    const context = await browser.newContext({ javaScriptEnabled: false });
    const page = await context.newPage();
    await page.goto(stack.landingUrl);
    const box = page.getByLabel(/Я согласен/);
    assert.equal(await box.getAttribute('type'), 'checkbox');
    assert.equal(await box.getAttribute('name'), 'consent');
    assert.equal(await box.getAttribute('required'), '');
    const link = page.getByRole('link', { name: 'политикой конфиденциальности' });
    assert.equal(await link.getAttribute('href'), POLICY);
    assert.equal(await link.getAttribute('target'), '_blank');
    assert.equal(await link.getAttribute('rel'), 'noopener');
    assert.equal(await page.getByLabel('Телефон').getAttribute('required'), null);
    assert.equal(await page.getByLabel('Ник в Telegram').getAttribute('required'), null);
    await context.close();
  });

  for (const javaScriptEnabled of [true, false]) {
    const who = javaScriptEnabled ? 'with JavaScript' : 'without JavaScript';
    it(`${who}: unticked is an error next to the box with the values kept; ticked is stored with its consent`, async () => {
      const name = javaScriptEnabled ? 'Вера Согласная' : 'Глеб Согласный';
      const phone = javaScriptEnabled ? '+7 916 555-77-01' : '+7 916 555-77-02';
      const context = await browser.newContext({ javaScriptEnabled });
      const page = await context.newPage();
      await page.goto(stack.landingUrl);
      await fill(page, { name, phone });
      await page.getByRole('button', { name: 'Отправить заявку' }).click();
      const error = page.locator('[data-error-for="consent"]');
      await error.waitFor({ timeout: 5000 });
      assert.equal(await error.textContent(), 'Нужно согласие на обработку персональных данных');
      assert.equal(await page.getByLabel(/Я согласен/).getAttribute('aria-invalid'), 'true');
      assert.equal(await page.getByLabel('Имя').inputValue(), name);
      assert.equal(await page.getByLabel('Телефон').inputValue(), phone);
      assert.equal(await listed(name), undefined, 'nothing stored without consent');

      await page.getByLabel(/Я согласен/).check();
      // Without JavaScript the form came back from the action: its fill time starts again.
      if (!javaScriptEnabled) await afterFillTime(page);
      await page.getByRole('button', { name: 'Отправить заявку' }).click();
      await page.locator('[data-state="sent"]').waitFor({ timeout: 10000 });

      const lead = await waitUntil(() => listed(name), 10000, 'the lead in GET /leads');
      assert.equal(lead.telegram, null);
      assert.equal(lead.phone, phone.replace(/[ -]/g, ''));
      assert.equal(lead.consent.policy_url, POLICY);
      assert.ok(Math.abs(Date.parse(lead.consent.accepted_at) - Date.parse(lead.created_at)) < 60_000, 'consent taken with the lead');
      const row = await csvRow(lead.lead_number);
      assert.equal(row.consent_accepted_at, lead.consent.accepted_at);
      assert.equal(row.consent_policy_url, POLICY);
      const card = await waitUntil(async () => (await stack.cards()).find((c) => c.text.includes(name)), 10000, 'the card');
      assert.match(card.text, /Телефон: \+7 916 555 77 0/);
      assert.doesNotMatch(card.text, /Telegram:/);
      assert.match(card.text, /☑️ Согласие на обработку данных/);
      await context.close();
    });
  }

  it('a telegram-only lead; erasure keeps the consent and the time of erasure, nothing personal', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(stack.landingUrl);
    await fill(page, { name: 'Ника Стираемая', telegram: '@nika_erase' });
    await page.getByLabel(/Я согласен/).check();
    await page.getByRole('button', { name: 'Отправить заявку' }).click();
    await page.locator('[data-state="sent"]').waitFor({ timeout: 10000 });
    const lead = await waitUntil(() => listed('Ника Стираемая'), 10000, 'the lead in GET /leads');
    assert.equal(lead.telegram, '@nika_erase');
    assert.equal(lead.phone, null);
    await context.close();

    execFileSync(process.execPath, [join(root, 'server/dist/cli.js'), 'forget', '--telegram', '@nika_erase'], {
      env: { PATH: process.env.PATH, DATABASE_PATH: stack.dbPath, LEADS_IP_SALT: 'e2e-salt' },
    });
    const erased = JSON.parse(await api('/leads?limit=200')).leads.find((l) => l.lead_number === lead.lead_number);
    assert.equal(erased.name, null);
    assert.equal(erased.telegram, null);
    assert.ok(erased.anonymised_at);
    assert.deepEqual(erased.consent, lead.consent);
    const row = await csvRow(lead.lead_number);
    assert.equal(row.name, '');
    assert.equal(row.consent_accepted_at, lead.consent.accepted_at);
    assert.equal(row.consent_policy_url, POLICY);
    const card = await waitUntil(
      async () => (await stack.cards()).find((c) => c.text.startsWith(`🆕 Заявка #${lead.lead_number}\n`) && c.text.includes('🗑')),
      15000,
      'the erased card',
    );
    assert.match(card.text, /☑️ Согласие на обработку данных/);
    assert.doesNotMatch(card.text, /Ника Стираемая/);
  });
});
