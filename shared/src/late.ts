/**
 * The `late` object of a replayed `POST /leads`: the landing could not hand the visitor's request to the
 * server's database when it came (server down, slow or misconfigured), kept it in its spool and sends it again later
 * with the same `request_id`, saying when the visitor sent it and where it went meanwhile. The server keeps the
 * visitor's time as the lead's time and turns the fallback message, when it can, into the lead's card.
 */
import { CONSENT_FIELD } from './codes.js';
import { LEAD_FIELDS, SERVER_FIELDS } from './fields.js';

/** The field name of the object in the body, and in `errors` when it is refused (`"late": "invalid"`). */
export const LATE_FIELD = 'late';
/** Every field name `POST /leads` can name in a 422's `errors`. */
export const REPORTED_FIELDS = [...LEAD_FIELDS, ...SERVER_FIELDS, LATE_FIELD, CONSENT_FIELD] as const;
export type ReportedField = (typeof REPORTED_FIELDS)[number];

/**
 * How far in the future `submitted_at` and `sent_at` may be. A landing whose clock runs ahead of the server's stamps
 * its spool's entries in the server's future: such a time is taken as the server's now (the lead is never dated after
 * it reached the server) and the skew is reported (`skewMs`: the trace notes it, ops get one alert), instead of
 * refusing every replay of that landing for good. A day covers any clock or time zone set wrong; a time further
 * ahead is no clock's and is refused.
 */
export const LATE_FUTURE_SKEW_MS = 24 * 60 * 60_000;
/** A skew below this is the ordinary difference of two clocks (and the time the request took): not reported. */
export const LATE_SKEW_REPORT_MS = 60_000;
/**
 * How old they may be. The landing drops its spool's entries after LANDING_SPOOL_MAX_AGE_DAYS (7 by default), so a
 * replay is never older than that unless ops raised it; 30 days leaves room for that and still refuses a time that
 * cannot be one (a year-old or epoch-zero time would put the lead outside every window and report).
 */
export const LATE_MAX_AGE_MS = 30 * 24 * 60 * 60_000;
/**
 * `route`: where the landing's spool says the request went when the server did not store it — `fallback` (the
 * Telegram fallback message was sent) or `lost` (nowhere). No other word is a landing's.
 */
export const LATE_ROUTES = ['fallback', 'lost'] as const;
export type LateRoute = (typeof LATE_ROUTES)[number];
/** `reason` is a short status or cause (`503`, `timeout`, `network`, `429 secret`): no markup, no line breaks. */
export const LATE_REASON = /^[A-Za-z0-9][A-Za-z0-9 ._:()/-]{0,59}$/;
/** A chat id as the Bot API gives it: an integer (as text) or a public `@name`. */
const CHAT_ID = /^(?:-?[1-9]\d{0,19}|@[A-Za-z][A-Za-z0-9_]{4,31})$/;
/**
 * ISO 8601 with a time zone: what `Date.prototype.toISOString` writes, or with an offset, and with up to nine digits
 * of a second (Python's `isoformat()` writes six); digits past the millisecond are dropped.
 */
const ISO_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(Z|[+-](\d{2}):(\d{2}))$/;

/**
 * `fallback.sig`: the landing's signature of its claim to the fallback message, base64url without padding
 * (HMAC-SHA256 gives 43 characters; up to 128 leave room for another one). Checked on the server, which holds the
 * key's ingredient (the bot token): only the shape here, as shared/ runs in the browser too.
 */
export const FALLBACK_SIG = /^[A-Za-z0-9_-]{1,128}$/;

const LATE_KEYS = ['submitted_at', 'route', 'reason', 'fallback'];
const FALLBACK_KEYS = ['chat_id', 'message_id', 'sent_at', 'sig'];

/** Where the landing's fallback message is (only when Telegram accepted it). */
export interface LateFallbackInfo {
  chat_id: string;
  message_id: number;
  /** When Telegram took it, in milliseconds since the epoch. */
  sent_at: number;
  /**
   * The claim's signature, when the landing sent one: the server adopts or answers the message only when it checks
   * (server/src/outbox/fallback-verifier.ts). Absent: an unsigned claim, which the server ignores.
   */
  sig?: string;
}

/** The checked `late` object; times in milliseconds since the epoch. */
export interface LateInfo {
  /** Never after the server's now (a landing clock ahead is clamped: `skewMs`). */
  submitted_at: number;
  route: LateRoute;
  reason: string;
  fallback: LateFallbackInfo | null;
  /** How far ahead of the server's clock the landing's `submitted_at` was, when more than LATE_SKEW_REPORT_MS; else 0. */
  skewMs: number;
}

export type LateCheck = { ok: true; value: LateInfo | null } | { ok: false };

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const onlyKnownKeys = (value: Record<string, unknown>, known: string[]) => Object.keys(value).every((k) => known.includes(k));

/** An ISO 8601 time that names a real instant (no 30 February, no 24:00), in milliseconds; else null. */
export function parseIsoTime(raw: unknown): number | null {
  if (typeof raw !== 'string' || raw.length > 40) return null;
  const m = ISO_TIME.exec(raw);
  if (!m) return null;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number);
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth || hour > 23 || minute > 59 || second > 59) return null;
  if (m[9] !== undefined && (Number(m[9]) > 23 || Number(m[10]) > 59)) return null;
  const millis = (m[7] ?? '').padEnd(3, '0').slice(0, 3);
  const ms = Date.parse(`${m.slice(1, 4).join('-')}T${m.slice(4, 7).join(':')}.${millis}${m[8]}`);
  return Number.isFinite(ms) ? ms : null;
}

/** A time that can be when a landing handled a request that reaches the server at `now` (as the landing's clock says). */
function lateTime(raw: unknown, now: number): number | null {
  const ms = parseIsoTime(raw);
  if (ms === null || ms > now + LATE_FUTURE_SKEW_MS || ms < now - LATE_MAX_AGE_MS) return null;
  return ms;
}

function checkFallback(raw: unknown, now: number): LateFallbackInfo | null {
  if (!isPlainObject(raw) || !onlyKnownKeys(raw, FALLBACK_KEYS)) return null;
  const { chat_id, message_id, sent_at, sig } = raw;
  if (typeof chat_id !== 'string' || !CHAT_ID.test(chat_id)) return null;
  if (typeof message_id !== 'number' || !Number.isSafeInteger(message_id) || message_id < 1) return null;
  if (sig !== undefined && (typeof sig !== 'string' || !FALLBACK_SIG.test(sig))) return null;
  const sentAt = lateTime(sent_at, now);
  if (sentAt === null) return null;
  return { chat_id, message_id, sent_at: Math.min(sentAt, now), ...(typeof sig === 'string' ? { sig } : {}) };
}

/**
 * Checks the `late` object of a `POST /leads` body at the server's time `now`. Absent (or null): an ordinary request.
 * Anything else must be exactly the documented shape — known keys only, a real time neither more than a day ahead
 * (a time ahead is taken as `now`, its skew reported) nor more than 30 days old, one of the landing's routes, a short
 * reason without markup, and, when present, a fallback
 * message with an integer or `@name` chat id, a positive message id, its time and optionally its signature (a short
 * base64url text) — or the whole object is invalid.
 */
export function validateLate(raw: unknown, now: number): LateCheck {
  if (raw === undefined || raw === null) return { ok: true, value: null };
  if (!isPlainObject(raw) || !onlyKnownKeys(raw, LATE_KEYS)) return { ok: false };
  const submittedAt = lateTime(raw.submitted_at, now);
  if (submittedAt === null) return { ok: false };
  if (typeof raw.route !== 'string' || !(LATE_ROUTES as readonly string[]).includes(raw.route)) return { ok: false };
  if (typeof raw.reason !== 'string' || !LATE_REASON.test(raw.reason)) return { ok: false };
  let fallback: LateFallbackInfo | null = null;
  if (raw.fallback !== undefined && raw.fallback !== null) {
    fallback = checkFallback(raw.fallback, now);
    if (!fallback) return { ok: false };
  }
  const skew = submittedAt - now;
  return {
    ok: true,
    value: {
      submitted_at: Math.min(submittedAt, now),
      route: raw.route as LateRoute,
      reason: raw.reason,
      fallback,
      skewMs: skew > LATE_SKEW_REPORT_MS ? skew : 0,
    },
  };
}
