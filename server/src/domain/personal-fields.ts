import { LEAD_FIELDS, type LeadField, SOURCE_KEYS, type SourceKey } from '@stickers/shared';
import type { SourceColumns } from './lead';

/**
 * Which stored values are personal data: the one list that the erasure, the card (LEADS_CARD_PII=0), the export
 * (`GET /leads`, the CSV) and the webhooks (which send the lead as `GET /leads` shows it) all read.
 *
 * The rule: every value a visitor (or whoever wrote the link they opened) could type is personal, because anything
 * can be typed into it. So every field of the form is, not only the contacts: `date` and `guests` are free text too
 * (`"Иванова Анна, ул. Ленина 5"` is a valid date, `"паспорт 4510 123456"` a valid guest count). So are the UTM values
 * (free text from the page URL: anyone can edit it, and mailings often put the recipient's address or id into
 * `utm_content` or `utm_term`) and the referrer's host (a personal site's name is a host). What stays is what the
 * visitor cannot type: the landing's own name (`LANDING_SOURCE`, set by the operator), times, statuses, numbers, the
 * landing's route and reason (short fixed words), Telegram chat and message ids. The record types below make a new
 * form field or source key a compile error until it is classified here.
 */
const FORM_FIELD_IS_PERSONAL: Record<LeadField, boolean> = {
  name: true,
  telegram: true,
  phone: true,
  date: true,
  guests: true,
  comment: true,
};

const SOURCE_KEY_IS_PERSONAL: Record<SourceKey, boolean> = {
  landing: false,
  utm_source: true,
  utm_medium: true,
  utm_campaign: true,
  utm_content: true,
  utm_term: true,
  referrer: true,
};

/** A source key's column on `leads` and `lead_repeats`. */
export const SOURCE_COLUMN: Record<SourceKey, keyof SourceColumns> = {
  landing: 'source_landing',
  utm_source: 'utm_source',
  utm_medium: 'utm_medium',
  utm_campaign: 'utm_campaign',
  utm_content: 'utm_content',
  utm_term: 'utm_term',
  referrer: 'source_referrer',
};

/** Every source column, in the order of `SOURCE_KEYS`. */
export const SOURCE_COLUMNS: readonly (keyof SourceColumns)[] = SOURCE_KEYS.map((k) => SOURCE_COLUMN[k]);

/** The form's personal fields: all six. Also the keys of a repeat's `changes` whose values erasure drops. */
export const PERSONAL_FIELDS: readonly LeadField[] = LEAD_FIELDS.filter((f) => FORM_FIELD_IS_PERSONAL[f]);

/** The source's personal keys (the UTM values and the referrer); the landing's name is not one. */
export const PERSONAL_SOURCE_KEYS: readonly SourceKey[] = SOURCE_KEYS.filter((k) => SOURCE_KEY_IS_PERSONAL[k]);

/** Their columns. */
export const PERSONAL_SOURCE_COLUMNS: readonly (keyof SourceColumns)[] = PERSONAL_SOURCE_KEYS.map((k) => SOURCE_COLUMN[k]);

/**
 * Every personal column of `leads`: the form's fields, the lower-cased username kept for the repeat match, the
 * visitor's address hash (`ip_hash`, a pseudonym of the address) and the personal source columns.
 */
export const PERSONAL_LEAD_COLUMNS = [...PERSONAL_FIELDS, 'telegram_key', 'ip_hash', ...PERSONAL_SOURCE_COLUMNS] as const;
export type PersonalLeadColumn = (typeof PERSONAL_LEAD_COLUMNS)[number];

/** Every personal column of `lead_repeats` besides `changes` (whose personal values are dropped, `erasedChanges`). */
export const PERSONAL_REPEAT_COLUMNS = ['ip_hash', ...PERSONAL_SOURCE_COLUMNS] as const;
export type PersonalRepeatColumn = (typeof PERSONAL_REPEAT_COLUMNS)[number];

export const isPersonalField = (field: string): boolean => (PERSONAL_FIELDS as readonly string[]).includes(field);
export const isPersonalSourceKey = (key: string): boolean => (PERSONAL_SOURCE_KEYS as readonly string[]).includes(key);

const nulls = <K extends string>(columns: readonly K[]): Record<K, null> =>
  Object.fromEntries(columns.map((c) => [c, null])) as Record<K, null>;

/** The `set` of an erased lead: every personal column null. */
export function erasedLeadColumns(): Record<PersonalLeadColumn, null> {
  return nulls(PERSONAL_LEAD_COLUMNS);
}

/** The `set` of an erased repeat, besides its `changes`: every personal column null. */
export function erasedRepeatColumns(): Record<PersonalRepeatColumn, null> {
  return nulls(PERSONAL_REPEAT_COLUMNS);
}

/**
 * A repeat's `changes` once erased: each personal value null, the field names kept — which fields a repeat changed is
 * no one's data, and the trace and the webhooks name them (`changed_fields`).
 */
export function erasedChanges(changes: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(changes).map(([k, v]) => [k, isPersonalField(k) ? null : v]));
}

/**
 * A row as it may be shown once its lead is erased: every personal column it has is null. The export and the
 * webhooks show an anonymised lead through this, so a value that an older erasure left (before `date` and `guests`
 * were counted as personal) or a row written while the erase ran is never shown.
 */
export function withoutPersonal<T extends object>(row: T): T {
  const out = { ...row } as Record<string, unknown>;
  for (const column of PERSONAL_LEAD_COLUMNS) if (column in out) out[column] = null;
  return out as T;
}
