/**
 * Where a lead came from: the landing's own name, the UTM parameters of the page URL and the referrer's
 * host, sent as the optional `source` object of `POST /leads`. One set of rules for the landing (which drops what
 * it cannot send) and the server (which refuses the whole object with `errors.source: "invalid"`).
 */
import { normaliseLine, visibleLength } from './text.js';

/** The field name of the object in the body, and in `errors` when it is refused (`"source": "invalid"`). */
export const SOURCE_FIELD = 'source';
export type SourceField = typeof SOURCE_FIELD;

/** The UTM parameters the landing reads from the page URL, by their URL names. */
export const UTM_KEYS = ['utm_source', 'utm_medium', 'utm_campaign', 'utm_content', 'utm_term'] as const;
/** Every key the `source` object may have: the landing's name (`LANDING_SOURCE`), the UTM values, the referrer's host. */
export const SOURCE_KEYS = ['landing', ...UTM_KEYS, 'referrer'] as const;
export type SourceKey = (typeof SOURCE_KEYS)[number];

/** The checked `source` object: only the keys that have a value. */
export type LeadSource = Partial<Record<SourceKey, string>>;

/** Characters of one value after normalisation (and four UTF-16 units per character at most). */
export const SOURCE_VALUE_MAX = 64;
/** The referrer is a host name: at most 253 characters (the DNS limit). */
export const SOURCE_HOST_MAX = 253;
/** A host as the landing sends it: lower-case letters, digits, dots, dashes (IDN as punycode), maybe a port. */
const HOST = /^[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?(?::\d{1,5})?$/;
const MARKUP = /[<>]/;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * One value of the object, normalised with the shared one-line normaliser: `null` when it is empty (dropped),
 * `undefined` when it is not allowed (not text, too long, markup, a referrer that is not a host).
 */
export function checkSourceValue(key: SourceKey, raw: unknown): string | null | undefined {
  if (raw === undefined || raw === null) return null;
  if (typeof raw !== 'string') return undefined;
  const value = normaliseLine(raw);
  if (value === '') return null;
  if (MARKUP.test(value)) return undefined;
  if (key === 'referrer') {
    const host = value.toLowerCase();
    return host.length <= SOURCE_HOST_MAX && HOST.test(host) ? host : undefined;
  }
  return value.length <= 4 * SOURCE_VALUE_MAX && visibleLength(value) <= SOURCE_VALUE_MAX ? value : undefined;
}

export type SourceCheck = { ok: true; value: LeadSource | undefined } | { ok: false; code: 'invalid' };

/**
 * Checks the `source` object of `POST /leads`. Absent, null, or with every value empty: no source (`undefined`, a
 * lead as before sources existed). Anything else must be an object of known keys only, each a short text without markup
 * (≤ 64 characters after normalisation, the referrer a host of ≤ 253), or the whole object is invalid.
 */
export function checkSource(raw: unknown): SourceCheck {
  if (raw === undefined || raw === null) return { ok: true, value: undefined };
  if (!isPlainObject(raw)) return { ok: false, code: 'invalid' };
  const keys = Object.keys(raw);
  if (!keys.every((k) => (SOURCE_KEYS as readonly string[]).includes(k))) return { ok: false, code: 'invalid' };
  const source: LeadSource = {};
  for (const key of SOURCE_KEYS) {
    if (!Object.prototype.hasOwnProperty.call(raw, key)) continue;
    const value = checkSourceValue(key, raw[key]);
    if (value === undefined) return { ok: false, code: 'invalid' };
    if (value !== null) source[key] = value;
  }
  return { ok: true, value: Object.keys(source).length > 0 ? source : undefined };
}

/**
 * What the landing sends: the values it was given, each normalised, and each one the server would refuse dropped
 * alone (a visitor's hand-made URL must never cost the lead). Undefined when nothing is left.
 */
export function cleanSource(raw: Partial<Record<SourceKey, unknown>>): LeadSource | undefined {
  const source: LeadSource = {};
  for (const key of SOURCE_KEYS) {
    const value = checkSourceValue(key, raw[key]);
    if (typeof value === 'string') source[key] = value;
  }
  return Object.keys(source).length > 0 ? source : undefined;
}

/** The host of a `Referer` header (`https://yandex.ru/search?…` → `yandex.ru`); null when it is not an http(s) URL. */
export function refererHost(referer: string | null | undefined): string | null {
  if (!referer) return null;
  try {
    const url = new URL(referer);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
    return url.host.toLowerCase() || null;
  } catch {
    return null;
  }
}

/**
 * The source of a landing's page request: the UTM parameters of its URL, the referrer's host (not when it is the
 * landing itself: a reload or the form's own post) and the landing's name. Cleaned as `cleanSource`.
 */
export function sourceOfPage(
  params: URLSearchParams,
  options: { landing?: string | null; referer?: string | null; ownHost?: string | null },
): LeadSource | undefined {
  const raw: Partial<Record<SourceKey, unknown>> = { landing: options.landing ?? undefined };
  for (const key of UTM_KEYS) raw[key] = params.get(key) ?? undefined;
  const host = refererHost(options.referer);
  if (host && host !== options.ownHost?.toLowerCase()) raw.referrer = host;
  return cleanSource(raw);
}

/** The card's short line: the landing name, then source / medium / campaign, missing parts left out; null when none. */
export function sourceSummary(source: LeadSource | null | undefined): string | null {
  if (!source) return null;
  const utm = [source.utm_source, source.utm_medium, source.utm_campaign].filter((v): v is string => !!v).join(' / ');
  const parts = [source.landing, utm].filter((v): v is string => !!v);
  return parts.length > 0 ? parts.join(' · ') : null;
}
