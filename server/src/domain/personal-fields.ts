import { LEAD_FIELDS, type LeadField, SOURCE_KEYS, type SourceKey } from '@stickers/shared';
import type { SourceColumns } from './lead';

/**
 * Which stored values are personal data: the one list the erasure, the card (LEADS_CARD_PII=0), the export and the
 * webhooks read. Every value a visitor could type is personal (every form field, the UTM values, the referrer's host);
 * what they cannot type is not (the landing's name, times, statuses, ids). A new field or key must be classified here.
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

/** A row as an erased lead may be shown: every personal column null, whatever an older erasure or a race left. */
export function withoutPersonal<T extends object>(row: T): T {
  const out = { ...row } as Record<string, unknown>;
  for (const column of PERSONAL_LEAD_COLUMNS) if (column in out) out[column] = null;
  return out as T;
}
