/**
 * Languages on the landing (docs/requirements.md, "Languages"): LANDING_LOCALE=en renders the whole page in English
 * with `lang="en"` (through the real Remix handler and the app's Vite build of it), words a refused field in English,
 * and the fallback message the group gets is English too. `ru` stays the default; any other value stops the start.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { LandingConfigError, loadLandingEnv } from '~/env.server';
import { en } from '~/i18n/en';
import { ru } from '~/i18n/ru';
import { requestMessage } from '~/leads/request-message.server';
import { appPages, visibleText } from './app-page';

const KEYS = ['LANDING_LOCALE', 'LEADS_ENDPOINT', 'LEADS_SECRET', 'TELEGRAM_BOT_TOKEN', 'LEADS_CHAT_ID', 'MIN_FILL_MS'];
const CYRILLIC = /[\u0400-\u04FF]/;

const app = appPages();
afterAll(async () => {
  await app.env({}, KEYS);
});

async function page(locale: string | undefined): Promise<string> {
  await app.env({ LANDING_LOCALE: locale, MIN_FILL_MS: '0' }, KEYS);
  const res = await app.get('/');
  expect(res.status).toBe(200);
  return res.text();
}

/** The page after a post of `values`, as a browser without JavaScript gets it. */
async function posted(values: Record<string, string>): Promise<string> {
  await app.env({ LANDING_LOCALE: 'en', MIN_FILL_MS: '0' }, KEYS);
  return (await app.post(values)).html;
}

describe('LANDING_LOCALE', () => {
  it('en: lang="en", English title, labels, hints and button, and not a Cyrillic letter on the page', async () => {
    const html = await page('en');
    expect(html).toContain('<html lang="en">');
    expect(html).toContain(`<title>${en.meta.title}</title>`);
    for (const text of [
      en.hero.title,
      en.form.title,
      ...Object.values(en.form.labels),
      en.form.optional,
      en.form.submit,
      en.form.consent,
      // The phone's hint asks for the country code: the Russian sample read as a rule, and a US number typed without
      // +1 is taken as a Russian one.
      'With the country code, e.g. +1 415 555 2671',
      // As English is written: a question for the comment's label, "we'll draw" for the promise.
      'What would you like?',
      "Send a few photos and we'll draw a Telegram sticker set",
    ]) {
      expect(visibleText(html)).toContain(text);
    }
    expect(visibleText(html)).not.toMatch(CYRILLIC);
  });

  it('ru, the default: lang="ru" and the Russian page as before', async () => {
    const html = await page(undefined);
    expect(html).toContain('<html lang="ru">');
    expect(visibleText(html)).toContain('Оставить заявку');
    expect(visibleText(html)).toContain(ru.form.labels.telegram);
    expect(visibleText(html)).toContain('Например: +7 916 555-12-34');
  });

  it('en: a refused field is worded in English next to it', async () => {
    const html = await posted({ name: 'Anna', telegram: '@ab', phone: '+79991234567' });
    expect(html).toContain('Telegram username: @name, 5–32 Latin letters, digits or _, starting with a letter');
    expect(html).toContain(en.form.states.invalid);
    expect(visibleText(html)).not.toMatch(CYRILLIC);
  });

  it('en: the Telegram message of a request (fallback and direct) is English', () => {
    const lead = { name: 'Anna', telegram: '@anna_k', phone: '+79991234567', date: 'May 1', guests: null, comment: 'Hi' };
    const fallback = requestMessage(lead, 'req-1', { fallback: true, locale: 'en' });
    expect(fallback.text.split('\n')).toEqual([
      en.message.fallbackWarning('req-1'),
      '',
      'Request from the website',
      'Name: Anna',
      'Telegram: @anna_k',
      'Phone: +7 999 123 45 67',
      'Date: May 1',
      'Comment: Hi',
    ]);
    expect(fallback.text.slice(fallback.entities[0].offset, fallback.entities[0].offset + fallback.entities[0].length)).toBe('@anna_k');
    expect(requestMessage(lead, 'req-1', { fallback: false, locale: 'en' }).text).not.toMatch(CYRILLIC);
  });

  it('anything but ru or en stops the start with one line', () => {
    expect(() => loadLandingEnv({ LANDING_LOCALE: 'de' })).toThrow(LandingConfigError);
    try {
      loadLandingEnv({ LANDING_LOCALE: 'de' });
    } catch (err) {
      expect((err as LandingConfigError).problems).toEqual(['LANDING_LOCALE must be one of ru, en (got "de")']);
    }
  });
});

describe('landing catalogues', () => {
  const paths = (value: unknown, path = ''): string[] =>
    typeof value === 'object' && value !== null ? Object.entries(value).flatMap(([k, v]) => paths(v, `${path}.${k}`)) : [path];
  const texts = (value: unknown): string[] =>
    typeof value === 'string'
      ? [value]
      : typeof value === 'function'
        ? [String((value as (a: string) => unknown)('1'))]
        : Object.values(value as object).flatMap(texts);

  it('ru and en have the same texts; en has no Cyrillic', () => {
    expect(paths(en)).toEqual(paths(ru));
    expect(texts(en).filter((t) => CYRILLIC.test(t))).toEqual([]);
  });
});
