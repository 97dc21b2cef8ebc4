/**
 * The field rules of docs/requirements.md §2, in one place for the landing (browser and action) and the server.
 * Every value is trimmed and normalised first; the normalised value is the one that is checked and stored.
 */
import { COMMENT_MAX, DATE_MAX, GUESTS_MAX, NAME_MAX, NAME_MIN, PHONE_DIGITS_MAX, TELEGRAM_NAME_MAX, TELEGRAM_NAME_MIN } from './limits.js';
import type { FieldErrorCode } from './codes.js';
import { canonicalIp } from './ip.js';
import { normaliseLine, normaliseMultiline, visibleLength } from './text.js';
import { checkSource, type LeadSource, type SourceField } from './source.js';
import { isCaptchaResult, type CaptchaResult } from './captcha.js';
import { DEFAULT_PHONE_REGION, normalisePhone, type PhoneRegion } from './phone.js';

/**
 * The form's first fields, each with a rule of its own below: the name, always required, and the two contacts, which
 * are required as LEADS_REQUIRED_CONTACTS says (`RequiredContacts`).
 */
export const REQUIRED_LEAD_FIELDS = ['name', 'telegram', 'phone'] as const;

/** The visitor's contacts: a lead has both, or one of them, as LEADS_REQUIRED_CONTACTS asks. */
export const CONTACT_FIELDS = ['telegram', 'phone'] as const;
export type ContactField = (typeof CONTACT_FIELDS)[number];

/**
 * Which contacts a lead must have (LEADS_REQUIRED_CONTACTS, the same value on both sides): both (the default), only the
 * username, only the phone, or `any` — at least one of the two. A contact that is not required may be left empty; one
 * that is given is checked all the same.
 */
export const REQUIRED_CONTACTS_MODES = ['telegram,phone', 'telegram', 'phone', 'any'] as const;
export type RequiredContacts = (typeof REQUIRED_CONTACTS_MODES)[number];
export const DEFAULT_REQUIRED_CONTACTS: RequiredContacts = 'telegram,phone';

/**
 * LEADS_REQUIRED_CONTACTS as a mode: unset or empty is the default; the pair in either order, spaces and letter case
 * ignored. Anything else is an error line for the side's `config error:` (both sides read it with this).
 */
export function parseRequiredContacts(
  raw: string | null | undefined,
): { ok: true; value: RequiredContacts } | { ok: false; error: string } {
  const text = (raw ?? '').trim().toLowerCase();
  if (text === '') return { ok: true, value: DEFAULT_REQUIRED_CONTACTS };
  const words = text.split(',').map((w) => w.trim());
  if (words.length === 2 && words.includes('telegram') && words.includes('phone')) return { ok: true, value: 'telegram,phone' };
  const one = words.length === 1 ? words[0] : '';
  if (one === 'telegram' || one === 'phone' || one === 'any') return { ok: true, value: one };
  return {
    ok: false,
    error: `LEADS_REQUIRED_CONTACTS must be telegram,phone (both), telegram, phone or any (at least one of them) (got "${raw!.trim()}")`,
  };
}

/** Whether this contact on its own is required in the mode (neither is in `any`: the pair is checked together). */
export function isContactRequired(field: ContactField, mode: RequiredContacts = DEFAULT_REQUIRED_CONTACTS): boolean {
  return mode === 'telegram,phone' || mode === field;
}

/**
 * The form's optional free-text fields and their rules, in the order every side shows them (the form, the card, the
 * export, the fallback message): the bound in characters, and whether line breaks are kept (one line otherwise). A
 * field added here is checked, sent, stored, carried by the submit decision, exported and erased with the others;
 * what names it in Russian (messages.ts, the form, the card, the fallback message) and whether it is personal
 * (the server's domain/personal-fields.ts) are compile errors until written (docs/architecture.md, "Adding an
 * optional field to the lead").
 */
export const OPTIONAL_FIELD_RULES = {
  date: { max: DATE_MAX, multiline: false },
  guests: { max: GUESTS_MAX, multiline: false },
  comment: { max: COMMENT_MAX, multiline: true },
} as const satisfies Record<string, { max: number; multiline: boolean }>;

export type OptionalLeadField = keyof typeof OPTIONAL_FIELD_RULES;
export const OPTIONAL_LEAD_FIELDS = Object.keys(OPTIONAL_FIELD_RULES) as OptionalLeadField[];

/** Every field of the form, required ones first. */
export type LeadField = (typeof REQUIRED_LEAD_FIELDS)[number] | OptionalLeadField;
export const LEAD_FIELDS: readonly LeadField[] = [...REQUIRED_LEAD_FIELDS, ...OPTIONAL_LEAD_FIELDS];

/**
 * Fields the server reads besides the visitor's own: the idempotency key, the visitor address and what came of the
 * landing's captcha.
 */
export const SERVER_FIELDS = ['request_id', 'client_ip', 'captcha'] as const;
export type ServerField = (typeof SERVER_FIELDS)[number];

export type SubmissionField = LeadField | ServerField;

/** A submission's refused fields, each with its code (docs/requirements.md §1.2). */
export type FieldErrors<F extends string = SubmissionField> = Partial<Record<F, FieldErrorCode>>;

export type FieldResult<T> = { ok: true; value: T } | { ok: false; code: FieldErrorCode };

const ok = <T>(value: T): FieldResult<T> => ({ ok: true, value });
const fail = (code: FieldErrorCode): FieldResult<never> => ({ ok: false, code });

/**
 * Reads a raw JSON value as text. `undefined`, `null` and text empty after trimming are "missing";
 * any other JSON type (number, boolean, array, object) is a wrong type and gets `invalid`.
 */
function readText(raw: unknown, normalise: (s: string) => string): { missing: true } | { missing: false; text: string } | null {
  if (raw === undefined || raw === null) return { missing: true };
  if (typeof raw !== 'string') return null;
  const text = normalise(raw);
  return text === '' ? { missing: true } : { missing: false, text };
}

/**
 * Each field's bound in UTF-16 code units (what JavaScript's `length` and Telegram count), besides the character
 * bound: one character as a person sees it can be many code units (an emoji ZWJ sequence, a letter with marks).
 * Four units per character for the one-line fields (an emoji with a skin tone is four), two for the comment (1200
 * simple emoji still fit), so that a whole lead — every field at its bound, with labels — stays well inside one
 * Telegram message of 4096 units. `telegram` and `phone` are bounded by their stored forms (`@` + 32, `+` + 15).
 */
export const FIELD_UNITS_MAX: Readonly<Record<LeadField, number>> = {
  name: 4 * NAME_MAX,
  telegram: 1 + TELEGRAM_NAME_MAX,
  phone: 1 + PHONE_DIGITS_MAX,
  ...(Object.fromEntries(
    OPTIONAL_LEAD_FIELDS.map((f) => [f, (OPTIONAL_FIELD_RULES[f].multiline ? 2 : 4) * OPTIONAL_FIELD_RULES[f].max]),
  ) as Record<OptionalLeadField, number>),
};

/** Over the character bound or the code unit bound: `too_long` either way (the visitor sees the character bound). */
function tooLong(text: string, field: LeadField, max: number): boolean {
  return text.length > FIELD_UNITS_MAX[field] || visibleLength(text) > max;
}

/** name: required, 2–80 characters (≤ 320 UTF-16 units). */
export function checkName(raw: unknown): FieldResult<string> {
  const t = readText(raw, normaliseLine);
  if (!t) return fail('invalid');
  if (t.missing) return fail('required');
  if (tooLong(t.text, 'name', NAME_MAX)) return fail('too_long');
  if (visibleLength(t.text) < NAME_MIN) return fail('too_short');
  return ok(t.text);
}

const TELEGRAM_NAME = new RegExp(`^[A-Za-z][A-Za-z0-9_]{${TELEGRAM_NAME_MIN - 1},${TELEGRAM_NAME_MAX - 1}}$`);
// Accepted spellings: @name, name, t.me/name, https://t.me/name (also http://, www., telegram.me, a trailing slash).
const TELEGRAM_LINK = /^(?:https?:\/\/)?(?:www\.)?(?:t|telegram)\.me\/([^/?#\s]+)\/?$/i;

/** telegram: required (`required`, the default; else missing is null); stored as `@name`; name 5–32 of `A-Za-z0-9_`, starting with a letter. */
export function checkTelegram(raw: unknown, required: boolean = true): FieldResult<string | null> {
  const t = readText(raw, normaliseLine);
  if (!t) return fail('invalid');
  if (t.missing) return required ? fail('required') : ok(null);
  let name = t.text;
  const link = TELEGRAM_LINK.exec(name);
  if (link) name = link[1];
  else if (name.startsWith('@')) name = name.slice(1);
  return TELEGRAM_NAME.test(name) ? ok(`@${name}`) : fail('invalid');
}

/**
 * phone: required (`required`, the default; else missing is null); as typed — national in `region` (`8 916 555-12-34`, `9165551234` for RU) or international with `+`
 * or `00`, separated by spaces, `-`, `(`, `)` or `.` (full-width digits and any dash read as ASCII) — and a valid number
 * there; stored as E.164 (`+79165551234`).
 */
export function checkPhone(raw: unknown, region: PhoneRegion = DEFAULT_PHONE_REGION, required: boolean = true): FieldResult<string | null> {
  const t = readText(raw, normaliseLine);
  if (!t) return fail('invalid');
  if (t.missing) return required ? fail('required') : ok(null);
  const phone = normalisePhone(t.text, region);
  return phone ? ok(phone) : fail('invalid');
}

/** An optional field's check, by its rule: null when missing, its bound, one line or several. */
export function checkOptional(field: OptionalLeadField, raw: unknown): FieldResult<string | null> {
  const rule = OPTIONAL_FIELD_RULES[field];
  const t = readText(raw, rule.multiline ? normaliseMultiline : normaliseLine);
  if (!t) return fail('invalid');
  if (t.missing) return ok(null);
  return tooLong(t.text, field, rule.max) ? fail('too_long') : ok(t.text);
}

/** date: optional, ≤ 60 characters (≤ 240 UTF-16 units). */
export const checkDate = (raw: unknown) => checkOptional('date', raw);
/** guests: optional, ≤ 40 characters (≤ 160 UTF-16 units). */
export const checkGuests = (raw: unknown) => checkOptional('guests', raw);
/** comment: optional, ≤ 1200 characters (≤ 2400 UTF-16 units); line breaks are kept. */
export const checkComment = (raw: unknown) => checkOptional('comment', raw);

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

export function isUuidV4(value: unknown): value is string {
  return typeof value === 'string' && UUID_V4.test(value);
}

/** request_id: required on the server, UUID v4; stored lower-case so that case does not make a second lead. */
export function checkRequestId(raw: unknown): FieldResult<string> {
  if (raw === undefined || raw === null) return fail('required');
  if (typeof raw !== 'string') return fail('invalid');
  const id = raw.trim().toLowerCase();
  if (id === '') return fail('required');
  return isUuidV4(id) ? ok(id) : fail('invalid');
}

/** client_ip: optional, IPv4 or IPv6; stored in canonical form (only ever as a hash on the server). */
export function checkClientIp(raw: unknown): FieldResult<string | null> {
  if (raw === undefined || raw === null) return ok(null);
  if (typeof raw !== 'string') return fail('invalid');
  if (raw.trim() === '') return ok(null);
  const ip = canonicalIp(raw);
  return ip ? ok(ip) : fail('invalid');
}

/** captcha: optional, `passed` or `unchecked` (captcha.ts); null when absent (the landing has no captcha). */
export function checkCaptcha(raw: unknown): FieldResult<CaptchaResult | null> {
  if (raw === undefined || raw === null) return ok(null);
  return isCaptchaResult(raw) ? ok(raw) : fail('invalid');
}

/**
 * A lead as the visitor typed it, after normalisation. Optional fields are null when missing, and so is a contact that
 * LEADS_REQUIRED_CONTACTS does not require (one of the two at least is there in `any`).
 */
export type LeadFields = { name: string } & { [K in ContactField]: string | null } & { [K in OptionalLeadField]: string | null };

/** What the server accepts: the lead plus its idempotency key and the visitor's address. */
export interface LeadSubmission extends LeadFields {
  request_id: string;
  client_ip: string | null;
  /** Where the lead came from; absent when the body has none or every value is empty. */
  source?: LeadSource;
  /** What came of the landing's captcha; null when the landing has none. */
  captcha: CaptchaResult | null;
}

export type Validation<T, F extends string> = { ok: true; value: T } | { ok: false; errors: FieldErrors<F> };

/**
 * What the checks need besides the values: the region national phone numbers are read in (LEADS_PHONE_REGION; RU)
 * and which contacts are required (LEADS_REQUIRED_CONTACTS; both).
 */
export interface FieldOptions {
  phoneRegion?: PhoneRegion;
  requiredContacts?: RequiredContacts;
}

function leadChecks(options: FieldOptions): { [K in LeadField]: (raw: unknown) => FieldResult<LeadFields[K]> } {
  const mode = options.requiredContacts ?? DEFAULT_REQUIRED_CONTACTS;
  return {
    name: checkName,
    telegram: (raw: unknown) => checkTelegram(raw, isContactRequired('telegram', mode)),
    phone: (raw: unknown) => checkPhone(raw, options.phoneRegion, isContactRequired('phone', mode)),
    ...(Object.fromEntries(OPTIONAL_LEAD_FIELDS.map((f) => [f, (raw: unknown) => checkOptional(f, raw)])) as {
      [K in OptionalLeadField]: (raw: unknown) => FieldResult<string | null>;
    }),
  };
}

function runChecks<T, F extends string>(
  input: Record<string, unknown>,
  checks: Record<F, (raw: unknown) => FieldResult<unknown>>,
): Validation<T, F> {
  const value: Record<string, unknown> = {};
  const errors: FieldErrors<F> = {};
  let failed = false;
  for (const field of Object.keys(checks) as F[]) {
    const result = checks[field](Object.prototype.hasOwnProperty.call(input, field) ? input[field] : undefined);
    if (result.ok) value[field] = result.value;
    else {
      errors[field] = result.code;
      failed = true;
    }
  }
  return failed ? { ok: false, errors } : { ok: true, value: value as T };
}

/**
 * `any`: at least one contact. Both missing (and neither malformed) is `required` on both fields, so the form names
 * the pair; a contact that is there but malformed keeps its own `invalid`.
 */
function checkContactPair<T, F extends string>(
  result: Validation<T, F>,
  input: Record<string, unknown>,
  options: FieldOptions,
): Validation<T, F> {
  if (options.requiredContacts !== 'any') return result;
  const errors = (result.ok ? {} : result.errors) as FieldErrors<string>;
  if (errors.telegram || errors.phone) return result;
  const given = CONTACT_FIELDS.some((f) => {
    const t = readText(Object.prototype.hasOwnProperty.call(input, f) ? input[f] : undefined, normaliseLine);
    return t !== null && !t.missing;
  });
  if (given) return result;
  return { ok: false, errors: { ...errors, telegram: 'required', phone: 'required' } as FieldErrors<F> };
}

/** The visitor's fields, as the landing checks them in the browser and in its action. Unknown keys are ignored. */
export function validateLeadFields(input: Record<string, unknown>, options: FieldOptions = {}): Validation<LeadFields, LeadField> {
  return checkContactPair(runChecks<LeadFields, LeadField>(input, leadChecks(options)), input, options);
}

/**
 * Everything `POST /leads` checks: the visitor's fields, `request_id`, `client_ip`, `captcha` and `source`. Every
 * failing field is named.
 */
export function validateSubmission(
  input: Record<string, unknown>,
  options: FieldOptions = {},
): Validation<LeadSubmission, SubmissionField | SourceField> {
  const result = runChecks<LeadSubmission, SubmissionField | SourceField>(input, {
    ...leadChecks(options),
    request_id: checkRequestId,
    client_ip: checkClientIp,
    captcha: checkCaptcha,
    source: checkSource,
  });
  return checkContactPair(result, input, options);
}
