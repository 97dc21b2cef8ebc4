/**
 * After sending (docs/requirements.md §8.6, docs/decisions.md "After sending: the number and the goal"): the action's
 * "sent" carries the lead's number the server answered, and the goal flag only for a delivered request with an
 * analytics counter configured; the counter's variables are checked at start; the goal is reached once per request.
 */
import { runInNewContext } from 'node:vm';
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { LandingConfigError, loadLandingEnv } from '~/env.server';
import { counterBootstrap, forgetReachedInPage, GOAL_KEY, reachGoalOnce, type AnalyticsConfig } from '~/leads/analytics';
import { loader as rootLoader } from '~/root';
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { en } from '~/i18n/en';
import { ru } from '~/i18n/ru';
import { TelegramLink } from '~/leads/lead-form';
import { postForm } from './post-form';
import { ENV_KEYS, captureConsole, configuredEnv, setEnv, standIns, type StandInAnswer } from './support';

const ANALYTICS_KEYS = ['LANDING_METRIKA_ID', 'LANDING_GA4_ID', 'LANDING_GOAL'];
const KEYS = [...ENV_KEYS, ...ANALYTICS_KEYS, 'LEADS_TELEGRAM_LINK_ROOT'];

let answer: StandInAnswer = { status: 201 };
const { sandbox, leads } = standIns(() => answer);
let ipCounter = 0;

const VISITOR = { name: 'Анна Ким', telegram: '@anna_k', phone: '+79991234567' };
const submit = (over: Partial<Parameters<typeof postForm>[0]> = {}) =>
  postForm({ values: VISITOR, forwardedFor: `198.51.100.${++ipCounter}`, ...over });
const useEnv = (over: Record<string, string | undefined> = {}) =>
  setEnv(configuredEnv(leads.url, sandbox, { TRUST_PROXY: '1', ...over }), KEYS);

beforeEach(() => {
  captureConsole('log');
  useEnv();
});
afterEach(() => {
  vi.restoreAllMocks();
});
afterAll(() => {
  setEnv({}, KEYS);
});

describe("the sent screen's number", () => {
  it("201: the action's sent carries the server's lead_number", async () => {
    answer = { status: 201, body: { lead_number: 42, duplicate: false, repeat: false } };
    const { result } = await submit();
    expect(result).toMatchObject({ state: 'sent', leadNumber: 42 });
  });

  it('the same request again (200, duplicate): the same number', async () => {
    const requestId = crypto.randomUUID();
    answer = { status: 201, body: { lead_number: 7, duplicate: false, repeat: false } };
    const first = await submit({ requestId });
    answer = { status: 200, body: { lead_number: 7, duplicate: true, repeat: false } };
    const again = await submit({ requestId });
    expect(first.result).toMatchObject({ state: 'sent', requestId, leadNumber: 7 });
    expect(again.result).toMatchObject({ state: 'sent', requestId, leadNumber: 7 });
  });

  it('a 201 without a usable number: sent, and no number invented', async () => {
    for (const body of [{}, { lead_number: 0 }, { lead_number: '42' }, { lead_number: 4.2 }]) {
      answer = { status: 201, body };
      const { result } = await submit();
      expect(result.state).toBe('sent');
      expect(result).not.toHaveProperty('leadNumber');
    }
  });

  it('the fallback (and so the spool): sent without a number', async () => {
    answer = { status: 503, body: { error: 'unavailable', lead_number: 9 } };
    const { result } = await submit();
    expect(result.state).toBe('sent');
    expect(result).not.toHaveProperty('leadNumber');
    expect(sandbox.messages(-1001000000001)).toHaveLength(1);
  });

  it("a bot's quiet sent: no number", async () => {
    answer = { status: 201, body: { lead_number: 5 } };
    const { result } = await submit({ fields: { company: 'Bots Inc' } });
    expect(result.state).toBe('sent');
    expect(result).not.toHaveProperty('leadNumber');
  });
});

describe('the sent screen\'s "Get the answer in Telegram"', () => {
  const LINK = 'https://t.me/stickers_leads_bot?start=Zx3kq9R2mV8pL0aB7cT1wY5nH4jD6fE_';

  it("201 and 200 (duplicate, repeat): the action's sent carries the server's telegram_link", async () => {
    answer = { status: 201, body: { lead_number: 42, duplicate: false, repeat: false, telegram_link: LINK } };
    expect((await submit()).result).toMatchObject({ state: 'sent', leadNumber: 42, telegramLink: LINK });
    answer = { status: 200, body: { lead_number: 42, duplicate: true, repeat: true, telegram_link: LINK } };
    expect((await submit()).result).toMatchObject({ state: 'sent', leadNumber: 42, telegramLink: LINK });
  });

  it('none when the server answered none or something that is not a t.me start link', async () => {
    for (const telegram_link of [null, undefined, 'javascript:alert(1)', 'https://evil.example/?start=x', `${LINK}"><script>`]) {
      answer = { status: 201, body: { lead_number: 5, duplicate: false, repeat: false, telegram_link } };
      const { result } = await submit();
      expect(result).toMatchObject({ state: 'sent', leadNumber: 5 });
      expect(result).not.toHaveProperty('telegramLink');
    }
  });

  it('under LEADS_TELEGRAM_LINK_ROOT (the sandbox in development): its links, and no longer t.me ones; a wrong root is one line', async () => {
    const root = 'http://127.0.0.1:3002/sandbox/t.me';
    const local = `${root}/stickers_leads_bot?start=Zx3kq9R2mV8pL0aB7cT1wY5nH4jD6fE_`;
    useEnv({ LEADS_TELEGRAM_LINK_ROOT: `${root}/` });
    answer = { status: 201, body: { lead_number: 8, duplicate: false, repeat: false, telegram_link: local } };
    expect((await submit()).result).toMatchObject({ state: 'sent', leadNumber: 8, telegramLink: local });
    for (const telegram_link of [LINK, `${root}/stickers_leads_bot?start=x&y=1`, `${root}.evil.example/stickers_leads_bot?start=x`]) {
      answer = { status: 201, body: { lead_number: 8, duplicate: false, repeat: false, telegram_link } };
      expect((await submit()).result).not.toHaveProperty('telegramLink');
    }
    expect(() => loadLandingEnv({ ...process.env, LEADS_TELEGRAM_LINK_ROOT: 't.me' })).toThrow(
      'LEADS_TELEGRAM_LINK_ROOT must be an http(s) URL like https://t.me (got "t.me")',
    );
  });

  it('the fallback (and so the spool) shows none', async () => {
    answer = { status: 503, body: { error: 'unavailable', telegram_link: LINK } };
    const { result } = await submit();
    expect(result.state).toBe('sent');
    expect(result).not.toHaveProperty('telegramLink');
  });

  it("is a real link, in the locale's words (it works without JavaScript)", () => {
    expect(renderToStaticMarkup(createElement(TelegramLink, { href: LINK, label: ru.sent.telegram }))).toBe(
      `<p class="telegram-link"><a href="${LINK}" rel="noopener noreferrer" target="_blank">Получить ответ в Telegram</a></p>`,
    );
    expect(en.sent.telegram).toBe('Get the answer in Telegram');
  });
});

describe('the goal flag of the action', () => {
  it('off by default: no goal flag on a sent, and the root loader gives the page no counter', async () => {
    answer = { status: 201, body: { lead_number: 1 } };
    const { result } = await submit();
    expect(result).not.toHaveProperty('goal');
    expect(rootLoader()).toEqual({ analytics: null, locale: 'ru' });
  });

  it('configured: on a delivered sent (server or fallback), never on a field error, a refusal or a bot', async () => {
    useEnv({ LANDING_METRIKA_ID: '12345678', LANDING_GOAL: 'lead_sent' });
    expect(rootLoader()).toEqual({ analytics: { metrikaId: '12345678', ga4Id: null, goal: 'lead_sent' }, locale: 'ru' });

    answer = { status: 201, body: { lead_number: 3 } };
    expect((await submit()).result).toMatchObject({ state: 'sent', leadNumber: 3, goal: true });
    answer = { status: 503 };
    expect((await submit()).result).toMatchObject({ state: 'sent', goal: true });

    answer = { status: 201, body: { lead_number: 4 } };
    const invalid = await submit({ fields: { phone: '12' } });
    expect(invalid.result.state).toBe('invalid');
    expect(invalid.result).not.toHaveProperty('goal');
    const bot = await submit({ fields: { company: 'Bots Inc' } });
    expect(bot.result.state).toBe('sent');
    expect(bot.result).not.toHaveProperty('goal');
    answer = { status: 429, body: { error: 'rate_limited', why: 'visitor' } };
    const throttled = await submit();
    expect(throttled.result.state).toBe('throttled');
    expect(throttled.result).not.toHaveProperty('goal');
    answer = { status: 422, body: { error: 'invalid', errors: { phone: 'invalid' } } };
    expect((await submit()).result).not.toHaveProperty('goal');
  });
});

describe('the counter variables, checked at start', () => {
  const problemsOf = (env: Record<string, string>) => {
    try {
      loadLandingEnv(env);
      return [];
    } catch (err) {
      return (err as LandingConfigError).problems;
    }
  };

  it('Metrica, GA4 or both with one goal; none by default', () => {
    expect(loadLandingEnv({}).analytics).toBeNull();
    expect(loadLandingEnv({ LANDING_METRIKA_ID: '12345678', LANDING_GOAL: 'lead_sent' }).analytics).toEqual({
      metrikaId: '12345678',
      ga4Id: null,
      goal: 'lead_sent',
    });
    expect(loadLandingEnv({ LANDING_GA4_ID: 'G-AB12CD34EF', LANDING_GOAL: 'generate_lead' }).analytics).toEqual({
      metrikaId: null,
      ga4Id: 'G-AB12CD34EF',
      goal: 'generate_lead',
    });
    expect(loadLandingEnv({ LANDING_METRIKA_ID: '1', LANDING_GA4_ID: 'G-ABCD', LANDING_GOAL: 'x' }).analytics).toEqual({
      metrikaId: '1',
      ga4Id: 'G-ABCD',
      goal: 'x',
    });
  });

  it('one line per problem: the ids, the goal, both or neither', () => {
    expect(problemsOf({ LANDING_METRIKA_ID: 'ym-123', LANDING_GA4_ID: 'UA-1234-1', LANDING_GOAL: 'lead sent!' })).toEqual([
      `LANDING_METRIKA_ID must be the Metrica counter's number, digits only (e.g. 12345678; got "ym-123")`,
      'LANDING_GA4_ID must be a GA4 measurement id like G-AB12CD34EF (got "UA-1234-1")',
      'LANDING_GOAL must be a short identifier: a letter, then letters, digits or _, up to 40 (e.g. lead_sent; got "lead sent!")',
    ]);
    expect(problemsOf({ LANDING_GOAL: 'lead_sent' })).toEqual([
      'LANDING_GOAL is set but neither LANDING_METRIKA_ID nor LANDING_GA4_ID is (a goal of which counter?)',
    ]);
    expect(problemsOf({ LANDING_METRIKA_ID: '12345678' })).toEqual([
      'LANDING_METRIKA_ID is set but LANDING_GOAL is not (set both, or neither)',
    ]);
    expect(problemsOf({ LANDING_GA4_ID: 'G-AB12CD34EF' })).toEqual([
      'LANDING_GA4_ID is set but LANDING_GOAL is not (set both, or neither)',
    ]);
    expect(problemsOf({ LANDING_METRIKA_ID: '0123', LANDING_GOAL: 'a'.repeat(41) })).toHaveLength(2);
    expect(problemsOf({ LANDING_GA4_ID: 'g-ab12cd34ef', LANDING_GOAL: '1st' })).toHaveLength(2);
  });
});

describe('reaching the goal in the browser', () => {
  const METRIKA: AnalyticsConfig = { metrikaId: '12345678', ga4Id: null, goal: 'lead_sent' };
  const BOTH: AnalyticsConfig = { metrikaId: '12345678', ga4Id: 'G-AB12CD34EF', goal: 'lead_sent' };
  const memoryStorage = () => {
    const items = new Map<string, string>();
    return { getItem: (k: string) => items.get(k) ?? null, setItem: (k: string, v: string) => void items.set(k, v), items };
  };
  beforeEach(() => forgetReachedInPage());

  it('once per request id: a second answer for the same request, or a new page in the same browser, reaches nothing', () => {
    const storage = memoryStorage();
    const ym = vi.fn();
    const id = crypto.randomUUID();
    expect(reachGoalOnce(METRIKA, id, { ym }, storage)).toBe(true);
    expect(reachGoalOnce(METRIKA, id, { ym }, storage)).toBe(false);
    forgetReachedInPage(); // a reload: the page's memory is gone, the browser's storage is not
    expect(reachGoalOnce(METRIKA, id, { ym }, storage)).toBe(false);
    expect(ym.mock.calls).toEqual([[12345678, 'reachGoal', 'lead_sent']]);
    const other = crypto.randomUUID();
    expect(reachGoalOnce(METRIKA, other, { ym }, storage)).toBe(true);
    expect(ym).toHaveBeenCalledTimes(2);
    expect(JSON.parse(storage.items.get(GOAL_KEY)!)).toEqual([id, other]);
  });

  it('both counters: each gets the goal once; blocked storage still keeps it once in the page', () => {
    const ym = vi.fn();
    const gtag = vi.fn();
    const blocked = {
      getItem: () => {
        throw new Error('blocked');
      },
      setItem: () => {
        throw new Error('blocked');
      },
    };
    const id = crypto.randomUUID();
    expect(reachGoalOnce(BOTH, id, { ym, gtag }, blocked)).toBe(true);
    expect(reachGoalOnce(BOTH, id, { ym, gtag }, null)).toBe(false);
    expect(ym.mock.calls).toEqual([[12345678, 'reachGoal', 'lead_sent']]);
    expect(gtag.mock.calls).toEqual([['event', 'lead_sent']]);
  });

  it('the memory keeps the newest 20 request ids', () => {
    const storage = memoryStorage();
    const ids = Array.from({ length: 25 }, () => crypto.randomUUID());
    for (const id of ids) reachGoalOnce(METRIKA, id, { ym: () => undefined }, storage);
    expect(JSON.parse(storage.items.get(GOAL_KEY)!)).toEqual(ids.slice(-20));
  });

  it("the bootstrap defines only the configured counters' functions, with no session recorder", () => {
    const metrika = counterBootstrap(METRIKA);
    expect(metrika).toContain('window.ym(12345678,"init"');
    expect(metrika).toContain('webvisor:false');
    expect(metrika).not.toContain('gtag');
    const ga4 = counterBootstrap({ metrikaId: null, ga4Id: 'G-AB12CD34EF', goal: 'x' });
    expect(ga4).toContain('window.gtag("config","G-AB12CD34EF")');
    expect(ga4).not.toContain('ym');
    // Run as the page runs it: the functions queue their calls until the vendor's script arrives.
    const win: Record<string, any> = {};
    runInNewContext(counterBootstrap(BOTH), { window: win });
    expect(win.ym.a.map((a: IArguments) => [...a])).toEqual([[12345678, 'init', expect.any(Object)]]);
    expect(win.dataLayer.map((a: IArguments) => [...a])[1]).toEqual(['config', 'G-AB12CD34EF']);
  });
});
