/**
 * What the visitor sees in each state of the page (docs/requirements.md §8.1, §8.6), as the app renders it through the
 * real Remix handler: where an answer's message stands, the sent screen's heading, the 404 page.
 */
import { afterAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { LandingConfigError, loadLandingEnv } from '~/env.server';
import { appPages, formOf, visibleText } from './app-page';
import { captureConsole, closedPort, configuredEnv, ENV_KEYS, standIns, type StandInAnswer } from './support';

const KEYS = [...ENV_KEYS, 'LANDING_LOCALE', 'LANDING_TELEGRAM_CONTACT'];
const VISITOR = { name: 'Анна Ким', telegram: '@anna_k', phone: '+7 916 555-12-34' };
const LINK = 'https://t.me/stickers_leads_bot?start=AbCdEfGhIjKlMnOpQrStUvWxYz012345';

let answer: StandInAnswer = { status: 201 };
const { sandbox, leads } = standIns(() => answer);

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

describe('the sent screen', () => {
  /** The page's heading of the form's section (`form-title`), its tag whole. */
  const heading = (html: string) => /<h2 id="form-title"[^>]*>[^<]*<\/h2>/.exec(html)?.[0];

  it("its heading is the news, not the form's «Оставить заявку»; focusable, and focused on the answer's page", async () => {
    await app.env(configuredEnv(leads.url, sandbox, { MIN_FILL_MS: '0' }), KEYS);
    answer = { status: 201, body: { lead_number: 7, duplicate: false, repeat: false, telegram_link: LINK } };
    const { html } = await app.post(VISITOR);
    expect(html).toMatch(/role="status" data-state="sent"/);
    expect(heading(html)).toBe('<h2 id="form-title" class="done" tabindex="-1" autofocus="">Заявка #7 отправлена!</h2>');
    expect(visibleText(html)).not.toContain('Оставить заявку');
    expect(html).toContain('aria-labelledby="form-title"');
  });

  it('shown again from the sent memory (a later visit): the same heading, not focused', async () => {
    await app.env(configuredEnv(leads.url, sandbox, { MIN_FILL_MS: '0' }), KEYS);
    const html = await (await app.get('/', { Cookie: `stickers_request_sent=${Date.now() - 60_000}` })).text();
    expect(heading(html)).toBe('<h2 id="form-title" class="done" tabindex="-1">Заявка отправлена!</h2>');
  });

  it('in English: "Request #7 sent!", never "Send a request"', async () => {
    await app.env(configuredEnv(leads.url, sandbox, { MIN_FILL_MS: '0', LANDING_LOCALE: 'en' }), KEYS);
    answer = { status: 201, body: { lead_number: 7, duplicate: false, repeat: false, telegram_link: LINK } };
    const { html } = await app.post(VISITOR);
    expect(heading(html)).toBe('<h2 id="form-title" class="done" tabindex="-1" autofocus="">Request #7 sent!</h2>');
    expect(visibleText(html)).not.toContain('Send a request');
  });

  it('the form keeps its own heading', async () => {
    await app.env(configuredEnv(leads.url, sandbox, { MIN_FILL_MS: '0' }), KEYS);
    expect(heading(await (await app.get('/')).text())).toBe('<h2 id="form-title">Оставить заявку</h2>');
  });
});

describe("the error state's other way: the studio's Telegram (LANDING_TELEGRAM_CONTACT)", () => {
  it('configured: «Или напишите нам в Telegram: @stickers_studio», a link to it in a new tab', async () => {
    await failingLanding({ LANDING_TELEGRAM_CONTACT: 'https://t.me/stickers_studio' });
    const { html } = await app.post(VISITOR);
    const alert = /<div id="form-result"[^>]*data-state="error">([\s\S]*?)<\/div>/.exec(html)![1];
    expect(visibleText(alert).trim()).toBe(
      'Не получилось отправить заявку. Попробуйте ещё раз — всё введённое сохранено. Или напишите нам в Telegram: @stickers_studio',
    );
    expect(alert).toContain('<a href="https://t.me/stickers_studio" target="_blank" rel="noopener noreferrer">@stickers_studio</a>');
  });

  it('in English: "Or message us on Telegram: @stickers_studio"', async () => {
    await failingLanding({ LANDING_TELEGRAM_CONTACT: '@stickers_studio', LANDING_LOCALE: 'en' });
    const { html } = await app.post(VISITOR);
    expect(visibleText(html)).toContain(
      'The request could not be sent. Try again — everything you typed is kept. Or message us on Telegram: @stickers_studio',
    );
  });

  it('not configured: no sentence that names no contact', async () => {
    await failingLanding();
    const { html } = await app.post(VISITOR);
    expect(html).toContain('data-state="error"');
    expect(visibleText(html)).not.toContain('напишите нам');
    expect(html).not.toContain('https://t.me/');
  });

  it('read as the form reads a username; anything else stops the start with one line', () => {
    expect(loadLandingEnv({}).telegramContact).toBeNull();
    for (const value of ['@stickers_studio', 'stickers_studio', 't.me/stickers_studio', 'https://t.me/stickers_studio/']) {
      expect(loadLandingEnv({ LANDING_TELEGRAM_CONTACT: value }).telegramContact).toBe('@stickers_studio');
    }
    for (const bad of ['@ab', 'https://example.com/stickers', '+79165551234', 'javascript:alert(1)']) {
      let problems: string[] = [];
      try {
        loadLandingEnv({ LANDING_TELEGRAM_CONTACT: bad });
      } catch (err) {
        problems = (err as LandingConfigError).problems;
      }
      expect(problems).toEqual([
        `LANDING_TELEGRAM_CONTACT must be the studio's Telegram username, like @stickers_studio or https://t.me/stickers_studio (got "${bad}")`,
      ]);
    }
  });
});

describe('an address with no page', () => {
  it("answers 404 with a title in the page's language, not an empty one", async () => {
    await app.env({}, KEYS);
    const res = await app.get('/no-such-page');
    expect(res.status).toBe(404);
    const html = await res.text();
    expect(html).toContain('<title>Страница не найдена — Stickers</title>');
    expect(html).toContain('Такой страницы нет.');
    await app.env({ LANDING_LOCALE: 'en' }, KEYS);
    expect(await (await app.get('/no-such-page')).text()).toContain('<title>Page not found — Stickers</title>');
  });

  it('the page itself keeps its own title', async () => {
    await app.env({}, KEYS);
    const html = await (await app.get('/')).text();
    expect([...html.matchAll(/<title>([^<]*)<\/title>/g)].map((m) => m[1])).toEqual(['Стикеры с вашими героями — Stickers']);
  });
});

describe("the comment's count", () => {
  /** The count under the comment, as the page shows it; null when there is none. */
  const countOf = (html: string) =>
    /<span class="hint count( over)?" id="comment-count">([^<]*)<\/span>/.exec(html.replace(/<!-- -->/g, ''));

  it('shows once the comment comes within 200 characters of its 1200, counted as the rules count', async () => {
    await failingLanding();
    // A refused phone brings the form back with what was typed.
    const near = await app.post({ ...VISITOR, phone: '12', comment: `${'а'.repeat(1000)}  \n\n\n\n${'👍🏽'.repeat(50)}` });
    expect(countOf(near.html)?.slice(1)).toEqual([undefined, '1052 / 1200']);
    expect(near.html).toContain('aria-describedby="comment-hint comment-count"');
    const over = await app.post({ ...VISITOR, comment: 'б'.repeat(1250) });
    expect(countOf(over.html)?.slice(1)).toEqual([' over', '1250 / 1200']);
    expect(over.html).toContain('data-error-for="comment"');
  });

  it('stays away from a comment far from its bound', async () => {
    await failingLanding();
    const { html } = await app.post({ ...VISITOR, phone: '12', comment: 'в'.repeat(999) });
    expect(html).toContain('name="comment"');
    expect(countOf(html)).toBeNull();
  });
});
