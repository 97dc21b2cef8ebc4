import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The form's `startedAt` is signed by the server when the page is rendered (`<ms>.<hmac>`), so a bot cannot post
 * an old timestamp to pass the minimum fill time.
 */
export function signStartedAt(now: number, key: Buffer): string {
  return `${now}.${createHmac('sha256', key).update(String(now)).digest('base64url')}`;
}

/** The signed time, or null when the value is missing, malformed or forged. */
export function verifyStartedAt(value: unknown, key: Buffer): number | null {
  if (typeof value !== 'string') return null;
  const m = /^(\d{1,15})\.([A-Za-z0-9_-]{43})$/.exec(value);
  if (!m) return null;
  const expected = createHmac('sha256', key).update(m[1]).digest();
  const given = Buffer.from(m[2], 'base64url');
  return given.length === expected.length && timingSafeEqual(given, expected) ? Number(m[1]) : null;
}
