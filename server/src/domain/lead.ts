import { LEAD_FIELDS, type CaptchaResult, type LeadField, type LeadFields } from '@stickers/shared';
import type { LeadStatus } from './lead-status';
import type { SourceColumns } from './personal-fields';

/** The longest search text the API takes (`q` of the export and the inbox); the inbox page's field stops there. */
export const SEARCH_MAX = 100;

/** The visitor's fields, one column per field of the form: null when not given, and once the lead is anonymised. */
export type FormColumns = { [K in LeadField]: string | null };

/**
 * A lead's number as people type it to the bot or the CLI (`42`, `#42`, `042`, spaces around); null for anything else, 0
 * included. A path of the API takes only the number as the API writes it (`LeadNumberParam`, http/validation.ts).
 */
export function leadNumberOf(text: string): number | null {
  const m = /^#?(\d{1,15})$/.exec(text.trim());
  return m && Number(m[1]) > 0 ? Number(m[1]) : null;
}

/** The form's fields of a submission or a row, and nothing else. */
export function formFieldsOf(from: LeadFields): LeadFields {
  return Object.fromEntries(LEAD_FIELDS.map((f) => [f, from[f]])) as LeadFields;
}

/** A late lead's fallback message: `pending` (may become its card), `adopted` (is), `answer` (to get a reply), and how that ended. */
export type FallbackState = 'pending' | 'adopted' | 'answer' | 'answered' | 'gone' | 'refused' | 'gave_up';

/** A late lead's or repeat's arrival and its fallback message. */
export interface LateColumns {
  /** When the server got it: created_at for a request in time, later for one replayed from the spool. */
  received_at: number | null;
  late_route: string | null;
  late_reason: string | null;
  fallback_chat_id: string | null;
  fallback_message_id: number | null;
  fallback_sent_at: number | null;
  fallback_state: FallbackState | null;
}

/** The visitor's consent as the landing sent it; null without. Not personal. */
export interface ConsentColumns {
  consent_accepted_at: number | null;
  consent_policy_url: string | null;
}

/** On leads and repeats: the landing's captcha (`passed`, `unchecked`; null: none) and the consent. */
interface CheckColumns extends ConsentColumns {
  captcha: CaptchaResult | null;
}

/** A row of `leads`, times in ms since the epoch. Personal columns (personal-fields.ts) are null once it is anonymised. */
export interface Lead extends FormColumns, LateColumns, SourceColumns, CheckColumns {
  id: number;
  request_id: string;
  /** Lower-cased username, for the repeat match. */
  telegram_key: string | null;
  /** HMAC-SHA256(LEADS_IP_SALT, visitor ip). */
  ip_hash: string | null;
  status: LeadStatus;
  created_at: number;
  published_at: number | null;
  chat_id: string | null;
  message_id: number | null;
  /** The forum topic the card went into; null for General or a chat without topics. */
  card_thread_id: number | null;
  last_error: string | null;
  anonymised_at: number | null;
  card_format: 'html' | 'plain' | null;
  status_changed_by: string | null;
  status_changed_at: number | null;
  card_dirty_at: number | null;
  reminded_at: number | null;
  /** When the lead or its repeats last changed, kept by the database's triggers (`GET /leads?updated_since=`). */
  updated_at: number;
}

export type RepeatOutcome = 'pinged' | 'in_card' | 'skipped' | 'gave_up';

/** A repeat of a lead (the same username or phone within 24 h), as a row of `lead_repeats`. */
export interface LeadRepeat extends LateColumns, SourceColumns, CheckColumns {
  id: number;
  lead_id: number;
  request_id: string;
  created_at: number;
  /** JSON object of the fields that differ from the lead as first stored. */
  changes: string;
  ip_hash: string | null;
  notified_at: number | null;
  last_error: string | null;
  notify_outcome: RepeatOutcome | null;
}

/** A repeat's `changes` (JSON of the fields that differ) as an object; an unreadable one as none. */
export function parseRepeatChanges(json: string): Record<string, unknown> {
  try {
    const value = JSON.parse(json) as unknown;
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
