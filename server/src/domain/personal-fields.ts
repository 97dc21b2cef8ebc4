import { LEAD_FIELDS, type LeadField, SOURCE_KEYS, type SourceKey } from '@stickers/shared';

/** Which stored values are personal (erasure, LEADS_CARD_PII=0, export, webhooks): whatever a visitor could type. */
const FORM_FIELD_IS_PERSONAL: Record<LeadField, boolean> = {
  name: true,
  telegram: true,
  phone: true,
  date: true,
  guests: true,
  comment: true,
};

/** Each source key's column on `leads` and `lead_repeats`, and whether it is personal. */
const SOURCE_KEY = {
  landing: { column: 'source_landing', personal: false },
  utm_source: { column: 'utm_source', personal: true },
  utm_medium: { column: 'utm_medium', personal: true },
  utm_campaign: { column: 'utm_campaign', personal: true },
  utm_content: { column: 'utm_content', personal: true },
  utm_term: { column: 'utm_term', personal: true },
  referrer: { column: 'source_referrer', personal: true },
} as const satisfies Record<SourceKey, { column: string; personal: boolean }>;

type SourceColumn = (typeof SOURCE_KEY)[SourceKey]['column'];

/** Where a lead or a repeat came from: `POST /leads`'s `source`, one column per key; all null without one. */
export type SourceColumns = Record<SourceColumn, string | null>;

export const SOURCE_COLUMN = Object.fromEntries(SOURCE_KEYS.map((k) => [k, SOURCE_KEY[k].column])) as Record<SourceKey, SourceColumn>;

/** Every source column, in the order of `SOURCE_KEYS`. */
export const SOURCE_COLUMNS: readonly SourceColumn[] = SOURCE_KEYS.map((k) => SOURCE_COLUMN[k]);

/** The form's personal fields, also the keys of a repeat's `changes` whose values erasure drops. */
export const PERSONAL_FIELDS: readonly LeadField[] = LEAD_FIELDS.filter((f) => FORM_FIELD_IS_PERSONAL[f]);

const PERSONAL_SOURCE_KEYS: readonly SourceKey[] = SOURCE_KEYS.filter((k) => SOURCE_KEY[k].personal);

export const PERSONAL_SOURCE_COLUMNS: readonly SourceColumn[] = PERSONAL_SOURCE_KEYS.map((k) => SOURCE_COLUMN[k]);

/** Every personal column of `leads` (`ip_hash` is a pseudonym of the address), and of `lead_repeats` besides `changes`. */
export const PERSONAL_LEAD_COLUMNS = [...PERSONAL_FIELDS, 'telegram_key', 'ip_hash', ...PERSONAL_SOURCE_COLUMNS] as const;
const PERSONAL_REPEAT_COLUMNS = ['ip_hash', ...PERSONAL_SOURCE_COLUMNS] as const;

export const isPersonalField = (field: string): boolean => (PERSONAL_FIELDS as readonly string[]).includes(field);
export const isPersonalSourceKey = (key: string): boolean => (PERSONAL_SOURCE_KEYS as readonly string[]).includes(key);

const nulls = <K extends string>(columns: readonly K[]): Record<K, null> =>
  Object.fromEntries(columns.map((c) => [c, null])) as Record<K, null>;

/** The `set` of an erased lead or repeat (besides its `changes`): every personal column null. */
export const erasedLeadColumns = () => nulls(PERSONAL_LEAD_COLUMNS);
export const erasedRepeatColumns = () => nulls(PERSONAL_REPEAT_COLUMNS);

/** A repeat's `changes` once erased: each personal value null, the field names kept (the trace and webhooks name them). */
export function erasedChanges(changes: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(changes).map(([k, v]) => [k, isPersonalField(k) ? null : v]));
}

/** A row as an erased lead may be shown: every personal column null, whatever an older erasure or a race left. */
export function withoutPersonal<T extends object>(row: T): T {
  const out = { ...row } as Record<string, unknown>;
  for (const column of PERSONAL_LEAD_COLUMNS) if (column in out) out[column] = null;
  return out as T;
}
