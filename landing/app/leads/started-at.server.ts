import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The form's `startedAt` is signed by the server when the page is rendered, so a bot cannot post an old timestamp to
 * pass the minimum fill time. The token carries the request id it was signed for, and the HMAC covers both:
 * `<ms>.<request id>.<hmac of "<ms>.<request id>">`. A token fetched once cannot be reused for other requests (reusing
 * it only repeats the same, idempotent request), and a post whose `requestId` field is missing or not a UUID v4 is
 * still the request its token names.
 */
export function signStartedAt(now: number, requestId: string, key: Buffer): string {
  return `${now}.${requestId}.${mac(String(now), requestId, key).toString('base64url')}`;
}

/**
 * A form token lives this long. Long enough for a page left open in a tab over a working day and the night after,
 * short enough that tokens harvested in bulk go stale; once bound to a request id a replay only repeats that request.
 * An older token is not a bot's: the visitor is asked to send again (with a fresh token for the same request id).
 */
export const FORM_TOKEN_MAX_AGE_MS = 24 * 60 * 60 * 1000;

/**
 * `expired`: a real page's token (one we signed) older than `maxAgeMs`; `invalid`: anything else. `requestId`: the
 * request the token was signed for; null for a token from before the binding (see below) on a post that names none.
 */
export type StartedAtCheck =
  | { ok: true; startedAt: number; requestId: string | null }
  | { ok: false; reason: 'expired'; requestId: string | null }
  | { ok: false; reason: 'invalid' };

/** `<ms>.<request id>.<hmac>`: what pages get now. */
const TOKEN = /^(\d{1,15})\.([0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12})\.([A-Za-z0-9_-]{43})$/;
/** `<ms>.<hmac>`: pages rendered before the token carried its request id (bound to it, or before the binding). */
const EARLIER_TOKEN = /^(\d{1,15})\.([A-Za-z0-9_-]{43})$/;

/**
 * Checks a form token against the post's `formRequestId` (its `requestId` field when that is a UUID v4, lower-cased;
 * null when it is missing or is not one) at `now`.
 * - A token that carries its request id is valid when its HMAC is, and names the request: the post's own `requestId`
 *   must then be that one, or missing or malformed (the token's is used); another UUID makes the token foreign.
 * - A token from a page rendered before tokens carried the request id (`<ms>.<hmac>`, for at most
 *   FORM_TOKEN_MAX_AGE_MS after that deploy) is checked as it was then: bound to `formRequestId`, or from before the
 *   binding (any request id).
 * Then the age: older than `maxAgeMs` is `expired`, with the request id for the fresh token.
 */
export function verifyStartedAt(
  value: unknown,
  formRequestId: string | null,
  key: Buffer,
  now: number,
  maxAgeMs = FORM_TOKEN_MAX_AGE_MS,
): StartedAtCheck {
  if (typeof value !== 'string') return { ok: false, reason: 'invalid' };
  let signedAt: string;
  let requestId: string | null;
  const current = TOKEN.exec(value);
  if (current) {
    const [, ms, tokenId, sig] = current;
    if (!sameMac(Buffer.from(sig, 'base64url'), mac(ms, tokenId, key))) return { ok: false, reason: 'invalid' };
    if (formRequestId !== null && formRequestId !== tokenId) return { ok: false, reason: 'invalid' };
    [signedAt, requestId] = [ms, tokenId];
  } else {
    const earlier = EARLIER_TOKEN.exec(value);
    if (!earlier) return { ok: false, reason: 'invalid' };
    const [, ms, sig] = earlier;
    const given = Buffer.from(sig, 'base64url');
    const bound = formRequestId !== null && sameMac(given, mac(ms, formRequestId, key));
    if (!bound && !signedBeforeBinding(ms, given, key)) return { ok: false, reason: 'invalid' };
    [signedAt, requestId] = [ms, formRequestId];
  }
  const startedAt = Number(signedAt);
  return now - startedAt > maxAgeMs ? { ok: false, reason: 'expired', requestId } : { ok: true, startedAt, requestId };
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
