import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The form's `startedAt` is signed by the server when the page is rendered (`<ms>.<hmac>`), so a bot cannot post
 * an old timestamp to pass the minimum fill time. The HMAC covers the form's `requestId` too: a token fetched once
 * cannot be reused for other requests (reusing it only repeats the same, idempotent request).
 */
export function signStartedAt(now: number, requestId: string, key: Buffer): string {
  return `${now}.${mac(String(now), requestId, key).toString('base64url')}`;
}

/**
 * A form token lives this long. Long enough for a page left open in a tab over a working day and the night after,
 * short enough that tokens harvested in bulk go stale; once bound to a request id a replay only repeats that request.
 */
export const FORM_TOKEN_MAX_AGE_MS = 24 * 60 * 60 * 1000;

export type StartedAtCheck = { ok: true; startedAt: number } | { ok: false; reason: 'invalid' | 'expired' };

/** The signed time when the value was signed for this request id and is not older than `maxAgeMs`. */
export function verifyStartedAt(
  value: unknown,
  requestId: string,
  key: Buffer,
  now: number,
  maxAgeMs = FORM_TOKEN_MAX_AGE_MS,
): StartedAtCheck {
  if (typeof value !== 'string') return { ok: false, reason: 'invalid' };
  const m = /^(\d{1,15})\.([A-Za-z0-9_-]{43})$/.exec(value);
  if (!m) return { ok: false, reason: 'invalid' };
  const expected = mac(m[1], requestId, key);
  const given = Buffer.from(m[2], 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { ok: false, reason: 'invalid' };
  const startedAt = Number(m[1]);
  return now - startedAt > maxAgeMs ? { ok: false, reason: 'expired' } : { ok: true, startedAt };
}

function mac(startedAt: string, requestId: string, key: Buffer): Buffer {
  return createHmac('sha256', key).update(`${startedAt}.${requestId}`).digest();
}
