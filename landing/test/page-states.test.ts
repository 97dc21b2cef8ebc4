/**
 * What the visitor sees in each state of the page (docs/requirements.md §8.1, §8.6), as the app renders it through the
 * real Remix handler: where an answer's message stands, the sent screen's heading, the 404 page.
 */
import { afterAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { appPages, formOf, visibleText } from './app-page';
import { captureConsole, closedPort } from './support';

const KEYS = [
  'LANDING_LOCALE',
  'LEADS_ENDPOINT',
  'LEADS_SECRET',
  'TELEGRAM_BOT_TOKEN',
  'TELEGRAM_API_ROOT',
  'LEADS_CHAT_ID',
  'MIN_FILL_MS',
];
const VISITOR = { name: 'Анна Ким', telegram: '@anna_k', phone: '+7 916 555-12-34' };

const app = appPages();
beforeEach(() => {
  captureConsole('log');
  captureConsole('error');
});
afterAll(async () => {
  vi.restoreAllMocks();
  await app.env({}, KEYS);
});

/** Direct mode whose Telegram refuses every connection: each request is lost, and the visitor sees the error. */
async function failingLanding(over: Record<string, string> = {}) {
  await app.env(
    {
      TELEGRAM_BOT_TOKEN: '123456:landing-test',
      LEADS_CHAT_ID: '-1001000000001',
      TELEGRAM_API_ROOT: `http://127.0.0.1:${await closedPort()}`,
      MIN_FILL_MS: '0',
      ...over,
    },
    KEYS,
  );
}

describe('an answer about sending stands by the button, where the focus comes back', () => {
  it('a failed send: the message right above the button, which it describes and which has autofocus without JavaScript', async () => {
    await failingLanding();
    const { html } = await app.post(VISITOR);
    const form = formOf(html);
    const alert = /<div id="form-result" class="result error" role="alert" data-state="error">[^<]*<\/div>/.exec(form);
    expect(alert).not.toBeNull();
    // Nothing between the message and the button: on a phone's screen they are in view together.
    const button = form.slice(form.indexOf(alert![0]) + alert![0].length);
    expect(button).toMatch(/^<button type="submit" aria-busy="false" aria-describedby="form-result" autofocus="">/);
    // Not at the head of the form any more: the fields come first.
    expect(form.indexOf(alert![0])).toBeGreaterThan(form.indexOf('name="comment"'));
    expect(visibleText(html)).toContain('Не получилось отправить заявку');
  });

  it('"check the fields marked below" still heads the form, and the button is as always', async () => {
    await failingLanding();
    const { html } = await app.post({ ...VISITOR, phone: '12' });
    const form = formOf(html);
    expect(form.indexOf('data-state="invalid"')).toBeGreaterThan(0);
    expect(form.indexOf('data-state="invalid"')).toBeLessThan(form.indexOf('name="name"'));
    expect(form).toMatch(/<button type="submit" aria-busy="false">/);
  });
});
