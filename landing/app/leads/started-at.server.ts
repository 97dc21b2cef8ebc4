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
 * An older token is not a bot's: the visitor is asked to send again (with a fresh token for the same request id).
 */
export const FORM_TOKEN_MAX_AGE_MS = 24 * 60 * 60 * 1000;

/** `expired`: a real page's token (one we signed) older than `maxAgeMs`; `invalid`: anything else. */
export type StartedAtCheck = { ok: true; startedAt: number } | { ok: false; reason: 'invalid' | 'expired' };

/**
 * The signed time when the value was signed for this request id (or before tokens were bound, see below) and is not
 * older than `maxAgeMs`.
 */
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
  const given = Buffer.from(m[2], 'base64url');
  if (!sameMac(given, mac(m[1], requestId, key)) && !signedBeforeBinding(m[1], given, key)) return { ok: false, reason: 'invalid' };
  const startedAt = Number(m[1]);
  return now - startedAt > maxAgeMs ? { ok: false, reason: 'expired' } : { ok: true, startedAt };
}

/**
 * Pages rendered before form tokens were bound to the request id carry `<ms>.<hmac of the ms alone>` (same key).
 * Such a token is a real visitor's: it counts as valid (for any request id, as it did then), under the same maximum
 * age. It is accepted rather than answered with "send again" because such a page still runs the JavaScript of the
 * old build, which neither shows that answer nor posts the fresh token back (it re-posts the request id with the
 * reloaded page's token, bound to another id, which would be dropped as a bot).
 * This exists only for pages rendered before that deploy: remove it once `FORM_TOKEN_MAX_AGE_MS` has passed since.
 */
function signedBeforeBinding(startedAt: string, given: Buffer, key: Buffer): boolean {
  return sameMac(given, createHmac('sha256', key).update(startedAt).digest());
}

function mac(startedAt: string, requestId: string, key: Buffer): Buffer {
  return createHmac('sha256', key).update(`${startedAt}.${requestId}`).digest();
}

function sameMac(given: Buffer, expected: Buffer): boolean {
  return given.length === expected.length && timingSafeEqual(given, expected);
}
