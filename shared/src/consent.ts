/**
 * The visitor's consent to the processing of personal data (docs/requirements.md §2.5): the landing's action adds
 * `consent: {accepted_at, policy_url}` to `POST /leads` when the form's box was ticked (the form shows the box only
 * with LANDING_PRIVACY_URL); the server checks it here and stores it with the lead.
 */
import { LATE_FUTURE_SKEW_MS, LATE_MAX_AGE_MS, parseIsoTime } from './late.js';
import type { FieldResult } from './fields.js';

/** The longest policy address accepted (the operator's own URL: a short one). */
export const CONSENT_POLICY_URL_MAX = 500;
/**
 * How far ahead of the server's clock `accepted_at` may be: the landing stamps it with its own clock just before
 * sending, so a few minutes cover two clocks set by NTP. A replay from the landing's spool (a body with `late`) may be
 * as far ahead as its `late.submitted_at` may (a day), since it was stamped by the same clock. A time ahead is taken as
 * the server's now.
 */
export const CONSENT_FUTURE_SKEW_MS = 5 * 60_000;

/** The `consent` object on the wire. */
export interface ConsentBody {
  /** When the visitor sent the form with the box ticked, ISO 8601 (`2026-12-02T10:15:30.123Z`). */
  accepted_at: string;
  /** The policy the box linked to (LANDING_PRIVACY_URL). */
  policy_url: string;
}

/** The checked consent; its time in milliseconds since the epoch, never after the server's now. */
export interface ConsentInfo {
  accepted_at: number;
  policy_url: string;
}

const CONSENT_KEYS = ['accepted_at', 'policy_url'];

/** An absolute http(s) URL with a host, of bounded length, without spaces or control characters; else null. */
export function checkPolicyUrl(raw: unknown): string | null {
  if (typeof raw !== 'string' || raw.length === 0 || raw.length > CONSENT_POLICY_URL_MAX) return null;
  // eslint-disable-next-line no-control-regex
  if (/[\s\u0000-\u001f\u007f]/.test(raw)) return null;
  // `https:/a.example`, `https:///a.example`, `https:\\a.example`: URL mends them, but the text is stored as sent (a broken link).
  if (!/^https?:\/\/[^/\\][^\\]*$/i.test(raw)) return null;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return null;
  }
  return url.hostname !== '' ? raw : null;
}

/**
 * Checks the `consent` object of a `POST /leads` body at the server's time `now`. Absent (or null): `required` when
 * consent is required (LEADS_REQUIRE_CONSENT=1), else no consent. Anything else must be exactly `{accepted_at,
 * policy_url}`: a real ISO 8601 time neither ahead of `now` by more than the skew (`late`: a replay's skew) nor older
 * than a replay can be (30 days), and an http(s) URL — or it is `invalid`.
 */
export function checkConsent(raw: unknown, now: number, options: { required: boolean; late?: boolean }): FieldResult<ConsentInfo | null> {
  if (raw === undefined || raw === null) return options.required ? { ok: false, code: 'required' } : { ok: true, value: null };
  if (typeof raw !== 'object' || Array.isArray(raw)) return { ok: false, code: 'invalid' };
  const o = raw as Record<string, unknown>;
  if (!Object.keys(o).every((k) => CONSENT_KEYS.includes(k))) return { ok: false, code: 'invalid' };
  const at = parseIsoTime(o.accepted_at);
  const skew = options.late ? LATE_FUTURE_SKEW_MS : CONSENT_FUTURE_SKEW_MS;
  if (at === null || at > now + skew || at < now - LATE_MAX_AGE_MS) return { ok: false, code: 'invalid' };
  const policyUrl = checkPolicyUrl(o.policy_url);
  if (policyUrl === null) return { ok: false, code: 'invalid' };
  return { ok: true, value: { accepted_at: Math.min(at, now), policy_url: policyUrl } };
}
