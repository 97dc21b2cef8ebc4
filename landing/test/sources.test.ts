/**
 * Where a lead came from: the page's loader reads the UTM parameters of its URL and the referrer's host into
 * the form's hidden inputs, and the action sends them with LANDING_SOURCE as `source` in POST /leads (and in the spool's
 * body when the server does not take it), against a real HTTP stand-in for POST /leads and the Telegram sandbox.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { loadLandingEnv, LandingConfigError } from '~/env.server';
import { loader } from '~/routes/_index';
import { postForm } from './post-form';
import { captureConsole, configuredEnv, ENV_KEYS, setEnv, standIns, type StandInAnswer, type StandInRequest } from './support';

let answer: StandInAnswer = { status: 201, body: { lead_number: 1, duplicate: false, repeat: false } };
const received: StandInRequest[] = [];
let ipCounter = 0;
const { sandbox, leads } = standIns((request) => {
  received.push(request);
  return answer;
});
const KEYS = [...ENV_KEYS, 'LANDING_SOURCE'];
const VISITOR = { name: 'Анна Ким', telegram: '@anna_k', phone: '+79991234567' };

/** The loader's data for a page request to `url`, with a `Referer` when given. */
function page(url: string, referer?: string) {
  const request = new Request(url, { headers: referer ? { Referer: referer } : {} });
  return (loader({ request, context: {}, params: {} }) as unknown as { data: { source: Record<string, string> } }).data;
}
const submit = (fields: Record<string, string>) => postForm({ values: VISITOR, fields, forwardedFor: `198.51.100.${++ipCounter}` });

beforeEach(() => {
  answer = { status: 201, body: { lead_number: 1, duplicate: false, repeat: false } };
  setEnv(configuredEnv(leads.url, sandbox, { TRUST_PROXY: '1', LANDING_SOURCE: 'wedding' }), KEYS);
  captureConsole('log');
  received.length = 0;
});
afterEach(() => {
  vi.restoreAllMocks();
  setEnv({}, ['LANDING_SOURCE']);
});

describe('the page reads where the visitor came from', () => {
  it('the UTM parameters of the URL and the referrer host become hidden values', () => {
    const data = page(
      'http://landing.test/?utm_source=yandex&utm_medium=cpc&utm_campaign=summer&utm_content=banner&utm_term=%D1%81%D0%B2%D0%B0%D0%B4%D1%8C%D0%B1%D0%B0&gclid=x',
      'https://yandex.ru/search/?text=stickers',
    );
    expect(data.source).toEqual({
      utm_source: 'yandex',
      utm_medium: 'cpc',
      utm_campaign: 'summer',
      utm_content: 'banner',
      utm_term: 'свадьба',
      referrer: 'yandex.ru',
    });
  });
  it('nothing for a plain URL, a referrer on the landing itself, or values the server would refuse', () => {
    expect(page('http://landing.test/').source).toEqual({});
    // Where «Отправить ещё одну заявку» leads (`/?again` redirects to the page), the sent page as the referrer.
    expect(page('http://landing.test/', 'http://landing.test/?index').source).toEqual({});
    expect(page(`http://landing.test/?utm_source=%3Cb%3E&utm_campaign=${'x'.repeat(65)}&utm_medium=cpc`).source).toEqual({
      utm_medium: 'cpc',
    });
  });
});

describe('the action sends source', () => {
  it('the hidden UTM values, the referrer and LANDING_SOURCE go to POST /leads as `source`', async () => {
    const { result } = await submit({ utm_source: 'yandex', utm_medium: 'cpc', utm_campaign: 'summer', referrer: 'yandex.ru' });
    expect(result.state).toBe('sent');
    expect(received).toHaveLength(1);
    expect(received[0].body.source).toEqual({
      landing: 'wedding',
      utm_source: 'yandex',
      utm_medium: 'cpc',
      utm_campaign: 'summer',
      referrer: 'yandex.ru',
    });
  });
  it('LANDING_SOURCE alone when the page had no UTM values; values the server would refuse are dropped, not the lead', async () => {
    await submit({});
    await submit({ utm_source: '<script>', utm_campaign: ' summer ', referrer: 'https://evil.example/x' });
    expect(received.map((r) => r.body.source)).toEqual([{ landing: 'wedding' }, { landing: 'wedding', utm_campaign: 'summer' }]);
  });
  it('without LANDING_SOURCE and without UTM values the body has no `source` at all (as before sources existed)', async () => {
    setEnv(configuredEnv(leads.url, sandbox, { TRUST_PROXY: '1' }), KEYS);
    await submit({});
    expect(received).toHaveLength(1);
    expect(Object.keys(received[0].body)).not.toContain('source');
  });
  it('a form shown again keeps its hidden values', async () => {
    answer = { status: 429, body: { error: 'rate_limited', why: 'visitor' } };
    const { result } = await submit({ utm_source: 'vk', utm_campaign: 'spring' });
    expect(result.state).toBe('throttled');
    expect(result.source).toEqual({ utm_source: 'vk', utm_campaign: 'spring' });
  });
  it('the spool keeps the same body, source included, for a request the server did not take', async () => {
    answer = { status: 503 };
    const { requestId } = await submit({ utm_source: 'yandex', utm_campaign: 'summer' });
    const dir = process.env.LANDING_SPOOL_DIR!;
    const file = readdirSync(dir).find((n) => n.endsWith(`${requestId}.json`));
    expect(file).toBeDefined();
    const entry = JSON.parse(readFileSync(join(dir, file!), 'utf8')) as { body: { source?: unknown } };
    expect(entry.body.source).toEqual({ landing: 'wedding', utm_source: 'yandex', utm_campaign: 'summer' });
    expect(entry.body.source).toEqual(received[0].body.source);
  });
});

describe('LANDING_SOURCE', () => {
  it('a short name; anything else is one line at start', () => {
    expect(loadLandingEnv({ LANDING_SOURCE: 'wedding' }).landingSource).toBe('wedding');
    expect(loadLandingEnv({}).landingSource).toBeNull();
    for (const bad of ['<b>', 'two words', 'x'.repeat(65)]) {
      let problems: string[] = [];
      try {
        loadLandingEnv({ LANDING_SOURCE: bad });
      } catch (err) {
        problems = (err as LandingConfigError).problems;
      }
      expect(problems).toEqual([
        `LANDING_SOURCE must be a short name of letters, digits, _, - or . (up to 64, e.g. wedding; got "${bad}")`,
      ]);
    }
  });
});
