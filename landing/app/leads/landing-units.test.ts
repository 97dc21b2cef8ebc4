import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { fallbackWarning, requestMessage } from './request-message.server';
import { LANDING_WINDOW_MS, RateLimiter, visitorIp } from './rate-limit.server';
import { FORM_TOKEN_MAX_AGE_MS, signStartedAt, verifyStartedAt } from './started-at.server';
import { submitRequest, type SubmitContext } from './submit-request.server';
import { markRequestSent, rememberedSent, SENT_KEY, SENT_LINK_TTL_MS, sentCookieRecent, SENT_TTL_MS } from './request-sent';
import { LandingConfigError, loadLandingEnv } from '../env.server';

const key = Buffer.alloc(32, 7);
const NOW = 1_800_000_000_000;
const ID = '0f8fad5b-d9cb-469f-a165-70867728950e';
const valid = { name: 'Анна', telegram: '@anna_k', phone: '+79991234567' };

function form(fields: Record<string, string | undefined>): FormData {
  const f = new FormData();
  for (const [k, v] of Object.entries(fields)) if (v !== undefined) f.set(k, v);
  return f;
}
const ctx = (over: Partial<SubmitContext> = {}): SubmitContext => ({
  ip: '203.0.113.1',
  now: NOW,
  minFillMs: 3000,
  signingKey: key,
  limiter: new RateLimiter(),
  ...over,
});
const base = (over: Record<string, string | undefined> = {}) =>
  form({ ...valid, company: '', startedAt: signStartedAt(NOW - 5000, ID, key), requestId: ID, ...over });

describe('submitRequest: the order of checks', () => {
  it('1. honeypot filled or missing → bot (quiet success), before anything else', () => {
    expect(submitRequest(base({ company: 'ACME', name: '' }), ctx())).toMatchObject({ kind: 'bot', reason: 'honeypot' });
    expect(submitRequest(base({ company: undefined }), ctx())).toMatchObject({ kind: 'bot', reason: 'honeypot' });
  });
  it('2. startedAt missing, forged or too recent → bot, before the schema', () => {
    expect(submitRequest(base({ startedAt: undefined, name: '' }), ctx())).toMatchObject({ kind: 'bot', reason: 'too-fast' });
    expect(submitRequest(base({ startedAt: `${NOW - 60000}.${'A'.repeat(43)}` }), ctx())).toMatchObject({
      kind: 'bot',
      reason: 'too-fast',
    });
    const early = base({ startedAt: signStartedAt(NOW - 2999, ID, key) });
    expect(submitRequest(early, ctx())).toMatchObject({ kind: 'bot', reason: 'too-fast' });
    expect(submitRequest(base({ startedAt: signStartedAt(NOW - 3000, ID, key) }), ctx())).toMatchObject({ kind: 'ok' });
    expect(submitRequest(base({ startedAt: signStartedAt(NOW - 60000, ID, Buffer.alloc(32, 8)) }), ctx())).toMatchObject({ kind: 'bot' });
  });
  it('2. a token signed for another request id fails the fill-time check', () => {
    const other = 'a3bb189e-8bf9-4888-9912-ace4e6543002';
    const foreign = base({ startedAt: signStartedAt(NOW - 60000, other, key) });
    expect(submitRequest(foreign, ctx())).toMatchObject({ kind: 'bot', reason: 'too-fast' });
    expect(submitRequest(base({ requestId: other }), ctx())).toMatchObject({ kind: 'bot', reason: 'too-fast', requestId: other });
  });
  it('2. requestId missing or not a UUID v4, the token valid: the request is the one the token was signed for', () => {
    for (const requestId of [undefined, '', 'not-a-uuid', '0f8fad5b-d9cb-169f-a165-70867728950e']) {
      expect(submitRequest(base({ requestId }), ctx())).toMatchObject({ kind: 'ok', requestId: ID });
    }
    // Spelled in capitals or with spaces it is the same request id.
    expect(submitRequest(base({ requestId: ` ${ID.toUpperCase()} ` }), ctx())).toMatchObject({ kind: 'ok', requestId: ID });
    // Every check still applies: too fast, invalid fields and an expired token keep the token's request id.
    expect(submitRequest(base({ requestId: undefined, startedAt: signStartedAt(NOW - 10, ID, key) }), ctx())).toMatchObject({
      kind: 'bot',
      reason: 'too-fast',
      requestId: ID,
    });
    expect(submitRequest(base({ requestId: undefined, phone: '1' }), ctx())).toMatchObject({ kind: 'invalid', requestId: ID });
    const expired = submitRequest(
      base({ requestId: undefined, startedAt: signStartedAt(NOW - FORM_TOKEN_MAX_AGE_MS - 1, ID, key) }),
      ctx(),
    );
    expect(expired).toMatchObject({ kind: 'expired', requestId: ID, startedAt: signStartedAt(NOW - 3000, ID, key) });
    // A forged token without a request id is a bot under a new request id.
    const forged = submitRequest(base({ requestId: undefined, startedAt: signStartedAt(NOW - 5000, ID, Buffer.alloc(32, 8)) }), ctx());
    expect(forged).toMatchObject({ kind: 'bot', reason: 'too-fast' });
    expect(forged.requestId).not.toBe(ID);
  });
  it('2. a token from before it carried the request id, on a post without one: a bot, as before', () => {
    const bound = `${NOW - 5000}.${createHmac('sha256', key)
      .update(`${NOW - 5000}.${ID}`)
      .digest('base64url')}`;
    expect(submitRequest(base({ startedAt: bound }), ctx())).toMatchObject({ kind: 'ok', requestId: ID });
    expect(submitRequest(base({ startedAt: bound, requestId: undefined }), ctx())).toMatchObject({ kind: 'bot', reason: 'too-fast' });
  });
  it('2. an expired token is a real visitor: expired, the values and a fresh token for the same request id', () => {
    const old = base({ startedAt: signStartedAt(NOW - FORM_TOKEN_MAX_AGE_MS - 1, ID, key), comment: 'к юбилею' });
    const check = submitRequest(old, ctx());
    expect(check).toMatchObject({ kind: 'expired', requestId: ID, values: { ...valid, comment: 'к юбилею' } });
    if (check.kind !== 'expired') throw new Error(check.kind);
    // Signed as if opened `minFillMs` ago: sent again at once, it passes the fill-time check, for this request id only.
    expect(check.startedAt).toBe(signStartedAt(NOW - 3000, ID, key));
    expect(submitRequest(base({ startedAt: check.startedAt }), ctx())).toMatchObject({ kind: 'ok', requestId: ID });
    expect(verifyStartedAt(check.startedAt, 'a3bb189e-8bf9-4888-9912-ace4e6543002', key, NOW)).toEqual({ ok: false, reason: 'invalid' });
    const oldest = base({ startedAt: signStartedAt(NOW - FORM_TOKEN_MAX_AGE_MS, ID, key) });
    expect(submitRequest(oldest, ctx())).toMatchObject({ kind: 'ok' });
  });
  it('2. a token from a page rendered before tokens were bound (HMAC of the time alone): valid within the maximum age, then expired', () => {
    const preDeploy = (t: number, k = key) => `${t}.${createHmac('sha256', k).update(String(t)).digest('base64url')}`;
    // Such a page still runs the old build's JavaScript, which cannot handle "send again": the request goes through.
    expect(submitRequest(base({ startedAt: preDeploy(NOW - 60_000) }), ctx())).toMatchObject({ kind: 'ok', requestId: ID });
    // The fill time and the maximum age apply as to any token.
    expect(submitRequest(base({ startedAt: preDeploy(NOW - 10) }), ctx())).toMatchObject({ kind: 'bot', reason: 'too-fast' });
    const old = submitRequest(base({ startedAt: preDeploy(NOW - FORM_TOKEN_MAX_AGE_MS - 60_000), comment: 'к юбилею' }), ctx());
    expect(old).toMatchObject({
      kind: 'expired',
      requestId: ID,
      values: { ...valid, comment: 'к юбилею' },
      startedAt: signStartedAt(NOW - 3000, ID, key),
    });
    // Under another key, or with the honeypot filled, it is still a bot.
    expect(submitRequest(base({ startedAt: preDeploy(NOW - 60_000, Buffer.alloc(32, 8)) }), ctx())).toMatchObject({
      kind: 'bot',
      reason: 'too-fast',
    });
    expect(submitRequest(base({ startedAt: preDeploy(NOW - 60_000), company: 'ACME' }), ctx())).toMatchObject({
      kind: 'bot',
      reason: 'honeypot',
    });
  });
  it('2. an expired token that is forged or signed for another request id is still a bot', () => {
    const other = 'a3bb189e-8bf9-4888-9912-ace4e6543002';
    expect(submitRequest(base({ startedAt: signStartedAt(NOW - FORM_TOKEN_MAX_AGE_MS - 1, other, key) }), ctx())).toMatchObject({
      kind: 'bot',
      reason: 'too-fast',
    });
    const forged = signStartedAt(NOW - FORM_TOKEN_MAX_AGE_MS - 1, ID, Buffer.alloc(32, 8));
    expect(submitRequest(base({ startedAt: forged }), ctx())).toMatchObject({ kind: 'bot', reason: 'too-fast' });
    expect(submitRequest(base({ startedAt: `${NOW - FORM_TOKEN_MAX_AGE_MS - 1}.${'A'.repeat(43)}` }), ctx())).toMatchObject({
      kind: 'bot',
      reason: 'too-fast',
    });
  });
  it('past the checks the verified token is handed back for a retry', () => {
    const token = signStartedAt(NOW - 5000, ID, key);
    expect(submitRequest(base({ startedAt: token }), ctx())).toMatchObject({ kind: 'ok', startedAt: token });
    expect(submitRequest(base({ startedAt: token, phone: '1' }), ctx())).toMatchObject({ kind: 'invalid', startedAt: token });
  });
  it('3. schema → invalid with per-field codes, before the rate limit', () => {
    const limiter = new RateLimiter(1);
    limiter.take('203.0.113.1', NOW);
    expect(submitRequest(base({ name: 'A', phone: '123' }), ctx({ limiter }))).toMatchObject({
      kind: 'invalid',
      errors: { name: 'too_short', phone: 'invalid' },
    });
  });
  it('4. the per-IP limit → throttled, keeping the values', () => {
    const c = ctx({ limiter: new RateLimiter(1) });
    expect(submitRequest(base(), c).kind).toBe('ok');
    expect(submitRequest(base(), c)).toMatchObject({ kind: 'throttled', values: { name: 'Анна' } });
  });
  it('keeps a valid UUID v4 requestId and makes one when it is missing or not v4', () => {
    expect(submitRequest(base(), ctx()).requestId).toBe('0f8fad5b-d9cb-469f-a165-70867728950e');
    const upper = submitRequest(base({ requestId: '0F8FAD5B-D9CB-469F-A165-70867728950E' }), ctx());
    expect(upper).toMatchObject({ kind: 'ok', requestId: '0f8fad5b-d9cb-469f-a165-70867728950e' });
    for (const bad of [undefined, '', 'nope', '0f8fad5b-d9cb-169f-a165-70867728950e']) {
      const id = submitRequest(base({ requestId: bad }), ctx()).requestId;
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(id).not.toBe('0f8fad5b-d9cb-169f-a165-70867728950e');
    }
  });
});

describe('rateLimit', () => {
  it('allows 5 per IP per 10 minutes, the 6th is refused, and the window slides', () => {
    const limiter = new RateLimiter();
    for (let i = 0; i < 5; i += 1) expect(limiter.take('a', NOW + i * 1000)).toBe(true);
    expect(limiter.take('a', NOW + 5000)).toBe(false);
    expect(limiter.take('b', NOW + 5000)).toBe(true);
    expect(limiter.take('a', NOW + LANDING_WINDOW_MS - 1)).toBe(false);
    expect(limiter.take('a', NOW + LANDING_WINDOW_MS)).toBe(true);
    expect(limiter.take('a', NOW + LANDING_WINDOW_MS + 1)).toBe(false);
  });
  it('a refused attempt does not extend the window', () => {
    const limiter = new RateLimiter(1, 1000);
    expect(limiter.take('a', 0)).toBe(true);
    expect(limiter.take('a', 999)).toBe(false);
    expect(limiter.take('a', 1000)).toBe(true);
  });
  it('release gives back the slot a failed delivery took', () => {
    const limiter = new RateLimiter(2, 1000);
    expect(limiter.take('a', 0)).toBe(true);
    expect(limiter.take('a', 10)).toBe(true);
    expect(limiter.take('a', 20)).toBe(false);
    limiter.release('a', 10);
    expect(limiter.take('a', 30)).toBe(true);
    expect(limiter.take('a', 40)).toBe(false);
    limiter.release('b', 40);
    limiter.release('a', 999);
    expect(limiter.take('a', 50)).toBe(false);
  });
  it('the IP is the socket address unless TRUST_PROXY names proxies; then the first untrusted hop from the right', () => {
    const xff = new Headers({ 'x-forwarded-for': ' 203.0.113.66 , 198.51.100.1' });
    expect(visitorIp(xff, '::ffff:127.0.0.1', { mode: 'none' })).toBe('127.0.0.1');
    expect(visitorIp(xff, '127.0.0.1', { mode: 'hops', hops: 1 })).toBe('198.51.100.1');
    expect(visitorIp(new Headers(), '127.0.0.1', { mode: 'hops', hops: 1 })).toBe('127.0.0.1');
    expect(visitorIp(new Headers({ 'x-forwarded-for': 'unknown' }), '127.0.0.1', { mode: 'hops', hops: 1 })).toBeNull();
    expect(visitorIp(new Headers(), undefined, { mode: 'none' })).toBeNull();
  });
});

describe('requestMessage', () => {
  const lead = { ...valid, date: '14 февраля', guests: '30', comment: 'Свадьба 💍' };
  it('fallback: the exact warning first line, then the request; username linked by a text_link entity', () => {
    const id = '0f8fad5b-d9cb-469f-a165-70867728950e';
    const m = requestMessage(lead, id, { fallback: true });
    expect(m.text.split('\n')[0]).toBe(`⚠️ Запасной канал: сервер заявок не ответил — заявки нет в базе (request_id ${id})`);
    expect(fallbackWarning(id)).toBe(m.text.split('\n')[0]);
    expect(m.entities).toHaveLength(1);
    const e = m.entities[0];
    expect(m.text.slice(e.offset, e.offset + e.length)).toBe('@anna_k');
    expect(e.url).toBe('https://t.me/anna_k');
  });
  it('offsets count UTF-16 code units: Cyrillic and emoji (surrogate pairs) before the username', () => {
    const m = requestMessage({ ...lead, name: '👩‍🎨 Аня 🎉' }, '0f8fad5b-d9cb-469f-a165-70867728950e', { fallback: true });
    const e = m.entities[0];
    // Counted by hand, each line and its "\n": the warning 113 units (⚠️ is two BMP code points), the empty line 0,
    // "Заявка с сайта" 14, "Имя: 👩‍🎨 Аня 🎉" 17 (14 code points: 👩, 🎨 and 🎉 take 2 units each), then "Telegram: " 10.
    expect(e.offset).toBe(113 + 1 + 0 + 1 + 14 + 1 + 17 + 1 + 10);
    // The same count from an encoder: UTF-16 takes two bytes per unit.
    expect(e.offset).toBe(Buffer.byteLength(m.text.slice(0, m.text.indexOf('@anna_k')), 'utf16le') / 2);
    // Counting code points instead would land 3 short, inside the name line.
    expect(Array.from(m.text.slice(0, e.offset)).length).toBe(e.offset - 3);
    expect(e.length).toBe(7);
    expect(m.text.slice(e.offset, e.offset + e.length)).toBe('@anna_k');
  });
  it('fallback with the reason the server did not take it: the second line says it, in the landing language', () => {
    const id = '0f8fad5b-d9cb-469f-a165-70867728950e';
    const second = (reason: string, locale?: 'en') => requestMessage(lead, id, { fallback: true, reason, locale }).text.split('\n')[1];
    expect(second('401')).toBe('Причина: сервер не принял секрет лендинга (LEADS_SECRET не тот, что у сервера)');
    expect(second('network')).toBe('Причина: сервер недоступен');
    expect(second('429 secret')).toBe('Причина: сервер заблокировал адрес лендинга после неверных секретов');
    expect(second('500')).toBe('Причина: сервер ответил 500');
    expect(second('timeout', 'en')).toBe('Reason: the server did not answer within 5 s');
    // The username's link still points at the username, a line further down.
    const m = requestMessage(lead, id, { fallback: true, reason: '401' });
    expect(m.text.slice(m.entities[0].offset, m.entities[0].offset + m.entities[0].length)).toBe('@anna_k');
  });
  it('direct mode has no warning line but names the request_id', () => {
    const m = requestMessage(lead, 'x-id', { fallback: false });
    expect(m.text).not.toContain('⚠️');
    expect(m.text.split('\n')[0]).toBe('Заявка с сайта (request_id x-id)');
  });
});

describe('startedAt signing', () => {
  const OTHER = 'a3bb189e-8bf9-4888-9912-ace4e6543002';
  it('carries the request id it was signed for; verifies what it signed, for that request id, and nothing else', () => {
    const token = signStartedAt(NOW, ID, key);
    expect(token).toMatch(new RegExp(`^${NOW}\\.${ID}\\.[A-Za-z0-9_-]{43}$`));
    expect(verifyStartedAt(token, ID, key, NOW + 5000)).toEqual({ ok: true, startedAt: NOW, requestId: ID });
    // The post names no usable request id: the token's is the request.
    expect(verifyStartedAt(token, null, key, NOW + 5000)).toEqual({ ok: true, startedAt: NOW, requestId: ID });
    expect(verifyStartedAt(token, OTHER, key, NOW + 5000)).toEqual({ ok: false, reason: 'invalid' });
    expect(verifyStartedAt(token.replace(ID, OTHER), null, key, NOW + 5000)).toEqual({ ok: false, reason: 'invalid' });
    expect(verifyStartedAt(String(NOW), ID, key, NOW)).toEqual({ ok: false, reason: 'invalid' });
    expect(verifyStartedAt(token.replace(String(NOW), String(NOW - 10000)), ID, key, NOW)).toEqual({ ok: false, reason: 'invalid' });
    expect(verifyStartedAt(token, null, Buffer.alloc(32, 8), NOW + 5000)).toEqual({ ok: false, reason: 'invalid' });
    expect(verifyStartedAt(undefined, ID, key, NOW)).toEqual({ ok: false, reason: 'invalid' });
  });
  it('has a maximum age', () => {
    const token = signStartedAt(NOW, ID, key);
    expect(verifyStartedAt(token, ID, key, NOW + FORM_TOKEN_MAX_AGE_MS)).toEqual({ ok: true, startedAt: NOW, requestId: ID });
    expect(verifyStartedAt(token, ID, key, NOW + FORM_TOKEN_MAX_AGE_MS + 1)).toEqual({ ok: false, reason: 'expired', requestId: ID });
    expect(verifyStartedAt(token, null, key, NOW + 2000, 1000)).toEqual({ ok: false, reason: 'expired', requestId: ID });
  });
  it("accepts a token from a page rendered before it carried the request id (bound to the form's request id), with the same maximum age", () => {
    const bound = `${NOW}.${createHmac('sha256', key).update(`${NOW}.${ID}`).digest('base64url')}`;
    expect(verifyStartedAt(bound, ID, key, NOW + 5000)).toEqual({ ok: true, startedAt: NOW, requestId: ID });
    expect(verifyStartedAt(bound, OTHER, key, NOW + 5000)).toEqual({ ok: false, reason: 'invalid' });
    // It does not say which request it was signed for: without the form's request id it cannot be checked.
    expect(verifyStartedAt(bound, null, key, NOW + 5000)).toEqual({ ok: false, reason: 'invalid' });
    expect(verifyStartedAt(bound, ID, key, NOW + FORM_TOKEN_MAX_AGE_MS + 1)).toEqual({ ok: false, reason: 'expired', requestId: ID });
  });
  it('accepts a token signed under the scheme from before the binding (same key), for any request id, with the same maximum age', () => {
    const unbound = `${NOW}.${createHmac('sha256', key).update(String(NOW)).digest('base64url')}`;
    expect(verifyStartedAt(unbound, ID, key, NOW + 5000)).toEqual({ ok: true, startedAt: NOW, requestId: ID });
    expect(verifyStartedAt(unbound, OTHER, key, NOW + 5000)).toEqual({ ok: true, startedAt: NOW, requestId: OTHER });
    expect(verifyStartedAt(unbound, null, key, NOW + 5000)).toEqual({ ok: true, startedAt: NOW, requestId: null });
    expect(verifyStartedAt(unbound, ID, key, NOW + FORM_TOKEN_MAX_AGE_MS + 1)).toEqual({ ok: false, reason: 'expired', requestId: ID });
    expect(verifyStartedAt(unbound.replace(String(NOW), String(NOW - 1)), ID, key, NOW + 5000)).toEqual({ ok: false, reason: 'invalid' });
    expect(verifyStartedAt(unbound, ID, Buffer.alloc(32, 8), NOW + 5000)).toEqual({ ok: false, reason: 'invalid' });
  });
});

describe('requestSent', () => {
  const store = new Map<string, string>();
  const storage = {
    getItem: (k: string) => store.get(k) ?? null,
    setItem: (k: string, v: string) => void store.set(k, v),
    removeItem: (k: string) => void store.delete(k),
  };
  const LINK = 'https://t.me/stickers_leads_bot?start=AbCdEfGhIjKlMnOpQrStUvWxYz012345';

  it('remembers a success for 24 hours in localStorage and in the cookie', () => {
    store.clear();
    expect(rememberedSent(storage, NOW)).toBeNull();
    markRequestSent(storage, {}, NOW);
    expect(rememberedSent(storage, NOW + SENT_TTL_MS - 1)).toEqual({});
    expect(rememberedSent(storage, NOW + SENT_TTL_MS)).toBeNull();
    expect(sentCookieRecent(`a=1; stickers_request_sent=${NOW}`, NOW + 1000)).toBe(true);
    expect(sentCookieRecent(`stickers_request_sent=${NOW}`, NOW + SENT_TTL_MS)).toBe(false);
    expect(sentCookieRecent(null, NOW)).toBe(false);
  });

  it("keeps the lead's number for the 24 hours, and its Telegram link while it still opens the bot", () => {
    store.clear();
    markRequestSent(storage, { leadNumber: 42, telegramLink: LINK }, NOW);
    expect(rememberedSent(storage, NOW + 1000)).toEqual({ leadNumber: 42, telegramLink: LINK });
    // A link opens the bot a day at the least (LEADS_TELEGRAM_LINK_DAYS=1): offered an hour less than that.
    expect(SENT_LINK_TTL_MS).toBe(23 * 60 * 60 * 1000);
    expect(rememberedSent(storage, NOW + SENT_LINK_TTL_MS - 1)).toEqual({ leadNumber: 42, telegramLink: LINK });
    expect(rememberedSent(storage, NOW + SENT_LINK_TTL_MS)).toEqual({ leadNumber: 42 });
    expect(rememberedSent(storage, NOW + SENT_TTL_MS)).toBeNull();
    // A success without them (the fallback's, a bot's quiet one) replaces them.
    markRequestSent(storage, {}, NOW + 2000);
    expect(rememberedSent(storage, NOW + 3000)).toEqual({});
  });

  it("reads an earlier version's value (the time alone); what is not a number or an http(s) link is left out", () => {
    store.clear();
    store.set(SENT_KEY, String(NOW));
    expect(rememberedSent(storage, NOW + 1000)).toEqual({});
    store.set(SENT_KEY, JSON.stringify({ at: NOW, leadNumber: -1, telegramLink: 'javascript:alert(1)' }));
    expect(rememberedSent(storage, NOW + 1000)).toEqual({});
    store.set(SENT_KEY, JSON.stringify({ at: NOW, leadNumber: '42', telegramLink: 42 }));
    expect(rememberedSent(storage, NOW + 1000)).toEqual({});
    for (const broken of ['{', 'null', '[]', JSON.stringify({ at: 'yesterday' }), JSON.stringify({ at: NOW + 60_000 })]) {
      store.set(SENT_KEY, broken);
      expect(rememberedSent(storage, NOW)).toBeNull();
    }
    const blocked = {
      getItem: () => {
        throw new Error('SecurityError');
      },
    };
    expect(rememberedSent(blocked, NOW)).toBeNull();
  });
});

describe('landing env', () => {
  it('lists every problem, one line each', () => {
    try {
      loadLandingEnv({ LEADS_ENDPOINT: 'ftp://x', MIN_FILL_MS: 'soon', TELEGRAM_BOT_TOKEN: '1:abc' });
      expect.unreachable();
    } catch (err) {
      expect((err as LandingConfigError).problems).toEqual([
        'LEADS_ENDPOINT must be the full http(s) URL of POST /leads (got "ftp://x")',
        'LEADS_ENDPOINT and LEADS_SECRET must be set together (or both left empty for direct mode)',
        'TELEGRAM_BOT_TOKEN and LEADS_CHAT_ID must be set together (the fallback needs both)',
        'MIN_FILL_MS must be a whole number of milliseconds up to 600000 (got "soon")',
      ]);
    }
  });
  it("a URL's password is not echoed in a problem's line", () => {
    try {
      loadLandingEnv({ LEADS_ENDPOINT: 'ftp://leads:ENDPOINTPASSWORD@server/leads', TELEGRAM_API_ROOT: 'ftp://api:APIPASSWORD@bot' });
      expect.unreachable();
    } catch (err) {
      const problems = (err as LandingConfigError).problems;
      expect(problems).toContain('LEADS_ENDPOINT must be the full http(s) URL of POST /leads (got "ftp://leads@server/leads")');
      expect(problems).toContain('TELEGRAM_API_ROOT must be an http(s) URL (got "ftp://api@bot")');
      expect(problems.join('\n')).not.toMatch(/PASSWORD/);
    }
  });
  it('defaults: direct mode, 3000 ms fill time, no trusted proxy, development', () => {
    expect(loadLandingEnv({})).toMatchObject({
      leadsEndpoint: null,
      telegram: null,
      minFillMs: 3000,
      signingKeyIsRandom: true,
      trustProxy: { mode: 'none' },
      production: false,
    });
  });
  const problemsOf = (env: Record<string, string>) => {
    try {
      loadLandingEnv(env);
      return [];
    } catch (err) {
      return (err as LandingConfigError).problems;
    }
  };
  it('TRUST_PROXY: hops or proxy addresses; a bad value is one line', () => {
    expect(loadLandingEnv({ TRUST_PROXY: '1' }).trustProxy).toEqual({ mode: 'hops', hops: 1 });
    expect(loadLandingEnv({ TRUST_PROXY: 'loopback, 10.0.0.0/8' }).trustProxy.mode).toBe('addresses');
    expect(problemsOf({ TRUST_PROXY: 'true' })).toEqual([
      'TRUST_PROXY must be 0/false, a number of proxy hops (1 behind one nginx or load balancer), or a comma list of proxy addresses, ' +
        'CIDR ranges, loopback, linklocal, uniquelocal (not understood: true)',
    ]);
    expect(problemsOf({ TRUST_PROXY: '10.0.0.0/8,proxy.internal' })).toHaveLength(1);
  });
  it('production refuses to start with neither the server nor Telegram configured', () => {
    expect(problemsOf({ NODE_ENV: 'production' })).toEqual([
      'in production set LEADS_ENDPOINT and LEADS_SECRET, or TELEGRAM_BOT_TOKEN and LEADS_CHAT_ID: requests would go nowhere',
    ]);
    expect(problemsOf({ NODE_ENV: 'production', TELEGRAM_BOT_TOKEN: '1:abc', LEADS_CHAT_ID: '-100123' })).toEqual([]);
    expect(problemsOf({ NODE_ENV: 'production', LEADS_ENDPOINT: 'http://127.0.0.1:3000/leads', LEADS_SECRET: 's' })).toEqual([]);
    expect(loadLandingEnv({ NODE_ENV: 'production', LEADS_ENDPOINT: 'http://x/leads', LEADS_SECRET: 's' }).production).toBe(true);
    expect(problemsOf({ NODE_ENV: 'development' })).toEqual([]);
  });
});
