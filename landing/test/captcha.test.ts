/**
 * The optional captcha (docs/requirements.md §8.8): the provider table, the verify request and answer of each provider
 * against the sandbox's stand-in over real HTTP (good, refused, reused, missing; unreachable, 503, hanging past the
 * timeout, not JSON), the settings checked at start, and the action: a refused or missing token asks again with the
 * values kept and sends nothing; an unreachable provider delivers the request marked `unchecked` (to the server, in
 * the fallback message and in the spool's body).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { CAPTCHA_PROVIDERS, CAPTCHA_SPECS, widgetScriptUrl, type CaptchaProvider } from '~/captcha/providers';
import { verifyCaptcha, type CaptchaConfig } from '~/captcha/verify.server';
import { getEnv, LandingConfigError, loadLandingEnv, pageCaptcha } from '~/env.server';
import { postForm } from './post-form';
import {
  ENV_KEYS,
  LEADS_CHAT,
  captureConsole,
  closedPort,
  configuredEnv,
  setEnv,
  standIns,
  type StandInAnswer,
  type StandInRequest,
} from './support';

const CAPTCHA_KEYS = [
  'CAPTCHA_PROVIDER',
  'CAPTCHA_SITE_KEY',
  'CAPTCHA_SECRET',
  'CAPTCHA_VERIFY_URL',
  'CAPTCHA_SCRIPT_URL',
  'CAPTCHA_TIMEOUT_MS',
];
const KEYS = [...ENV_KEYS, ...CAPTCHA_KEYS];
const SECRET = 'stand-in-secret';

let answer: StandInAnswer = { status: 201, body: { lead_number: 1, duplicate: false, repeat: false } };
const posted: StandInRequest[] = [];
const { sandbox, leads } = standIns((request) => {
  posted.push(request);
  return answer;
});
const stand = () => sandbox.captcha;

const config = (provider: CaptchaProvider, over: Partial<CaptchaConfig> = {}): CaptchaConfig => ({
  provider,
  siteKey: 'site-key',
  secret: SECRET,
  verifyUrl: `${sandbox.url}/captcha/${provider}/verify`,
  scriptUrl: `${sandbox.url}/captcha/${provider}/api.js`,
  timeoutMs: 3000,
  ...over,
});

beforeEach(() => {
  stand().reset();
  posted.length = 0;
  answer = { status: 201, body: { lead_number: 1, duplicate: false, repeat: false } };
});
afterEach(() => {
  stand().releaseHanging();
  vi.restoreAllMocks();
});
afterAll(() => setEnv({}, KEYS));

describe('the provider table', () => {
  it('each provider: its token field, its own script and verify endpoint, its JavaScript API', () => {
    expect(CAPTCHA_PROVIDERS).toEqual(['turnstile', 'smartcaptcha', 'hcaptcha']);
    expect(Object.fromEntries(CAPTCHA_PROVIDERS.map((p) => [p, CAPTCHA_SPECS[p].tokenField]))).toEqual({
      turnstile: 'cf-turnstile-response',
      smartcaptcha: 'smart-token',
      hcaptcha: 'h-captcha-response',
    });
    expect(CAPTCHA_SPECS.turnstile.verifyUrl).toBe('https://challenges.cloudflare.com/turnstile/v0/siteverify');
    expect(CAPTCHA_SPECS.smartcaptcha.verifyUrl).toBe('https://smartcaptcha.yandexcloud.net/validate');
    expect(CAPTCHA_SPECS.hcaptcha.verifyUrl).toBe('https://api.hcaptcha.com/siteverify');
    expect(CAPTCHA_SPECS.turnstile.scriptUrl).toBe('https://challenges.cloudflare.com/turnstile/v0/api.js');
    expect(CAPTCHA_SPECS.smartcaptcha.scriptUrl).toBe('https://smartcaptcha.yandexcloud.net/captcha.js');
    expect(CAPTCHA_SPECS.hcaptcha.scriptUrl).toBe('https://js.hcaptcha.com/1/api.js');
    expect(CAPTCHA_PROVIDERS.map((p) => CAPTCHA_SPECS[p].global)).toEqual(['turnstile', 'smartCaptcha', 'hcaptcha']);
  });

  it('the script is loaded for explicit rendering with an onload callback, keeping the query it had', () => {
    const page = (provider: CaptchaProvider, scriptUrl: string) => ({ provider, siteKey: 'k', scriptUrl });
    expect(widgetScriptUrl(page('turnstile', CAPTCHA_SPECS.turnstile.scriptUrl), 'cb')).toBe(
      'https://challenges.cloudflare.com/turnstile/v0/api.js?render=explicit&onload=cb',
    );
    expect(widgetScriptUrl(page('smartcaptcha', CAPTCHA_SPECS.smartcaptcha.scriptUrl), 'cb')).toBe(
      'https://smartcaptcha.yandexcloud.net/captcha.js?render=onload&onload=cb',
    );
    expect(widgetScriptUrl(page('hcaptcha', 'http://127.0.0.1:1/w.js?hl=ru'), 'cb')).toBe(
      'http://127.0.0.1:1/w.js?hl=ru&render=explicit&onload=cb',
    );
  });
});

describe.each(CAPTCHA_PROVIDERS)('verify against the stand-in: %s', (provider) => {
  const tokenParam = provider === 'smartcaptcha' ? 'token' : 'response';
  const ipParam = provider === 'smartcaptcha' ? 'ip' : 'remoteip';

  it("a token the stand-in issued passes once, sent in the provider's fields with the secret and the visitor's address", async () => {
    const token = stand().issue(provider);
    expect(await verifyCaptcha(config(provider), token, '203.0.113.7')).toEqual({ kind: 'passed' });
    expect(stand().verifications).toEqual([{ provider, params: { secret: SECRET, [tokenParam]: token, [ipParam]: '203.0.113.7' } }]);
    // Used up: the same token again is refused, as the providers refuse a replayed token.
    expect(await verifyCaptcha(config(provider), token, null)).toMatchObject({ kind: 'rejected' });
    expect(stand().verifications[1].params).toEqual({ secret: SECRET, [tokenParam]: token });
  });

  it('an unknown (forged) token is refused; no token is refused without asking', async () => {
    expect(await verifyCaptcha(config(provider), 'forged-token', null)).toMatchObject({ kind: 'rejected' });
    expect(await verifyCaptcha(config(provider), null, null)).toEqual({ kind: 'rejected', detail: 'no token' });
    expect(stand().verifications).toHaveLength(1);
  });

  it('a refusal of our secret is no verdict on the visitor: unchecked', async () => {
    expect(await verifyCaptcha(config(provider, { secret: '' }), stand().issue(provider), null)).toMatchObject({ kind: 'unchecked' });
  });

  it('unreachable, 503, not JSON, hanging past the timeout: unchecked', async () => {
    const token = () => stand().issue(provider);
    const closed = `http://127.0.0.1:${await closedPort()}/verify`;
    expect(await verifyCaptcha(config(provider, { verifyUrl: closed }), token(), null)).toMatchObject({ kind: 'unchecked' });
    stand().fault = 'unavailable';
    expect(await verifyCaptcha(config(provider), token(), null)).toEqual({ kind: 'unchecked', detail: 'status 503' });
    stand().fault = 'garbage';
    expect(await verifyCaptcha(config(provider), token(), null)).toEqual({ kind: 'unchecked', detail: 'unreadable answer' });
    stand().fault = 'hang';
    expect(await verifyCaptcha(config(provider, { timeoutMs: 200 }), token(), null)).toEqual({
      kind: 'unchecked',
      detail: 'timeout (200 ms)',
    });
  });
});

describe('the settings', () => {
  const load = (env: Record<string, string>) => loadLandingEnv(env);
  const problems = (env: Record<string, string>) => {
    try {
      load(env);
      return [];
    } catch (err) {
      return (err as LandingConfigError).problems;
    }
  };

  it('off by default; on with provider, site key and secret, the provider’s own URLs and 3000 ms unless set', () => {
    expect(load({}).captcha).toBeNull();
    expect(load({ CAPTCHA_PROVIDER: 'smartcaptcha', CAPTCHA_SITE_KEY: 'ysc1_abc', CAPTCHA_SECRET: 'ysc2_s' }).captcha).toEqual({
      provider: 'smartcaptcha',
      siteKey: 'ysc1_abc',
      secret: 'ysc2_s',
      verifyUrl: 'https://smartcaptcha.yandexcloud.net/validate',
      scriptUrl: 'https://smartcaptcha.yandexcloud.net/captcha.js',
      timeoutMs: 3000,
    });
    const env = load({
      CAPTCHA_PROVIDER: 'turnstile',
      CAPTCHA_SITE_KEY: '0x4AAA',
      CAPTCHA_SECRET: 's',
      CAPTCHA_VERIFY_URL: 'http://127.0.0.1:9/v',
      CAPTCHA_SCRIPT_URL: 'http://127.0.0.1:9/s.js',
      CAPTCHA_TIMEOUT_MS: '1500',
    });
    expect(env.captcha).toMatchObject({ verifyUrl: 'http://127.0.0.1:9/v', scriptUrl: 'http://127.0.0.1:9/s.js', timeoutMs: 1500 });
    // The page gets the widget's part, never the secret.
    expect(pageCaptcha(env)).toEqual({ provider: 'turnstile', siteKey: '0x4AAA', scriptUrl: 'http://127.0.0.1:9/s.js' });
  });

  it('each bad setting is one line', () => {
    expect(problems({ CAPTCHA_PROVIDER: 'recaptcha', CAPTCHA_SITE_KEY: 'k', CAPTCHA_SECRET: 's' })).toEqual([
      'CAPTCHA_PROVIDER must be one of turnstile, smartcaptcha, hcaptcha (got "recaptcha")',
    ]);
    expect(problems({ CAPTCHA_PROVIDER: 'hcaptcha' })).toEqual([
      'CAPTCHA_PROVIDER is set but CAPTCHA_SITE_KEY is not (the widget needs the site key)',
      'CAPTCHA_PROVIDER is set but CAPTCHA_SECRET is not (the check of the token needs the secret key)',
    ]);
    expect(problems({ CAPTCHA_SITE_KEY: 'k', CAPTCHA_SECRET: 's' })).toEqual([
      'CAPTCHA_SITE_KEY, CAPTCHA_SECRET are set but CAPTCHA_PROVIDER is not (set it to turnstile, smartcaptcha, hcaptcha, or leave them all empty)',
    ]);
    const on = { CAPTCHA_PROVIDER: 'turnstile', CAPTCHA_SITE_KEY: 'k', CAPTCHA_SECRET: 's' };
    expect(problems({ ...on, CAPTCHA_VERIFY_URL: 'ftp://x' })).toEqual(['CAPTCHA_VERIFY_URL must be an http(s) URL (got "ftp://x")']);
    expect(problems({ ...on, CAPTCHA_SCRIPT_URL: 'nope' })).toEqual(['CAPTCHA_SCRIPT_URL must be an http(s) URL (got "nope")']);
    expect(problems({ ...on, CAPTCHA_TIMEOUT_MS: '60000' })).toEqual([
      'CAPTCHA_TIMEOUT_MS must be a whole number of milliseconds from 100 to 10000 (got "60000")',
    ]);
    expect(problems({ ...on, CAPTCHA_SITE_KEY: '"><script>' })).toHaveLength(1);
  });
});

describe('the action with a captcha', () => {
  const VISITOR = { name: 'Анна Ким', telegram: '@anna_k', phone: '+79991234567', comment: 'свадьба' };
  let ip = 0;
  const useCaptcha = (over: Record<string, string> = {}) =>
    setEnv(
      configuredEnv(leads.url, sandbox, {
        TRUST_PROXY: '1',
        CAPTCHA_PROVIDER: 'turnstile',
        CAPTCHA_SITE_KEY: 'site-key',
        CAPTCHA_SECRET: SECRET,
        CAPTCHA_VERIFY_URL: `${sandbox.url}/captcha/turnstile/verify`,
        CAPTCHA_SCRIPT_URL: `${sandbox.url}/captcha/turnstile/api.js`,
        ...over,
      }),
      KEYS,
    );
  const submit = (fields: Record<string, string> = {}) => postForm({ values: VISITOR, fields, forwardedFor: `198.51.100.${++ip}` });
  beforeEach(() => {
    captureConsole('log');
    useCaptcha();
  });

  it('a good token: delivered with captcha "passed"; the visitor’s address went to the provider', async () => {
    const { result } = await submit({ 'cf-turnstile-response': stand().issue('turnstile') });
    expect(result.state).toBe('sent');
    expect(posted.map((p) => p.body.captcha)).toEqual(['passed']);
    expect(stand().verifications[0].params.remoteip).toBe(`198.51.100.${ip}`);
  });

  it('a forged or missing token: asked again, the values kept, nothing sent, the slot given back', async () => {
    for (const fields of [{ 'cf-turnstile-response': 'forged' }, {}] as Record<string, string>[]) {
      const { result, requestId } = await submit(fields);
      expect(result).toMatchObject({ state: 'captcha', requestId, values: VISITOR });
      expect(result.startedAt).toEqual(expect.any(String));
    }
    expect(posted).toEqual([]);
    // The same visitor, many refusals, then a good token: still within the limit (only delivered requests keep a slot).
    const again = async () => postForm({ values: VISITOR, fields: { 'cf-turnstile-response': 'forged' }, forwardedFor: '198.51.100.250' });
    for (let i = 0; i < 5; i += 1) expect((await again()).result.state).toBe('captcha');
    const good = await postForm({ values: VISITOR, fields: { 'cf-turnstile-response': stand().issue() }, forwardedFor: '198.51.100.250' });
    expect(good.result.state).toBe('sent');
  });

  it('field errors come first: the token is not spent on a form that is not sent', async () => {
    const { result } = await postForm({ values: { ...VISITOR, phone: 'x' }, fields: { 'cf-turnstile-response': 'forged' } });
    expect(result.state).toBe('invalid');
    expect(stand().verifications).toEqual([]);
  });

  it('the provider down: delivered with captcha "unchecked" and a log line saying why', async () => {
    const lines = captureConsole('log');
    stand().fault = 'unavailable';
    const { result, requestId } = await submit({ 'cf-turnstile-response': stand().issue() });
    expect(result.state).toBe('sent');
    expect(posted.map((p) => p.body.captcha)).toEqual(['unchecked']);
    expect(lines).toContain(`[request] ${requestId} captcha unchecked (status 503)`);
  });

  it('provider and server both down: the fallback message says the captcha was not checked, the spool keeps the mark', async () => {
    useCaptcha({ CAPTCHA_VERIFY_URL: `http://127.0.0.1:${await closedPort()}/verify` });
    answer = { status: 503 };
    const { result, requestId } = await submit({ 'cf-turnstile-response': 'any' });
    expect(result.state).toBe('sent');
    const message = sandbox.messages(LEADS_CHAT).at(-1)!;
    expect(message.text.split('\n').slice(1, 5)).toEqual([
      'Причина: сервер не может сохранить заявку (503)',
      '',
      'Заявка с сайта',
      '⚠️ Капча не проверена: сервис проверки был недоступен',
    ]);
    // The username's link still points at the username, below the new line.
    const link = message.entities.find((e) => e.type === 'text_link')!;
    expect(message.text.slice(link.offset, link.offset + link.length)).toBe('@anna_k');
    const dir = getEnv().spool!.dir;
    const entry = readdirSync(dir).find((f) => f.endsWith(`-${requestId}.json`))!;
    expect(JSON.parse(readFileSync(join(dir, entry), 'utf8')).body.captcha).toBe('unchecked');
  });
});
