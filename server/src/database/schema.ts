import type { Generated, Insertable, Selectable, Updateable } from 'kysely';

/** Lead statuses (docs/requirements.md §5.1). */
export const LEAD_STATUSES = ['new', 'in_progress', 'won', 'lost', 'spam'] as const;
export type LeadStatus = (typeof LEAD_STATUSES)[number];

/** Times are milliseconds since the epoch (UTC) throughout. */
export interface LeadsTable {
  id: Generated<number>;
  request_id: string;
  /** Personal fields: null once the lead is anonymised. */
  name: string | null;
  telegram: string | null;
  /** Lower-cased username, for the case-insensitive repeat match. */
  telegram_key: string | null;
  phone: string | null;
  date: string | null;
  guests: string | null;
  comment: string | null;
  /** HMAC-SHA256(LEADS_IP_SALT, visitor ip); the raw address is never stored. */
  ip_hash: string | null;
  status: Generated<LeadStatus>;
  created_at: number;
  published_at: number | null;
  chat_id: string | null;
  message_id: number | null;
  publish_attempts: Generated<number>;
  next_attempt_at: number;
  last_error: string | null;
  anonymised_at: number | null;
  card_format: 'html' | 'plain' | null;
  status_changed_by: string | null;
  status_changed_at: number | null;
  card_dirty_at: number | null;
  card_refresh_attempts: Generated<number>;
  card_refresh_next_at: number | null;
  reminded_at: number | null;
}

export interface LeadRepeatsTable {
  id: Generated<number>;
  lead_id: number;
  request_id: string;
  created_at: number;
  /** JSON object of the fields that differ from the lead as first stored. */
  changes: string;
  ip_hash: string | null;
  notified_at: number | null;
  notify_attempts: Generated<number>;
  next_attempt_at: number;
  last_error: string | null;
  notify_outcome: RepeatOutcome | null;
}

export type RepeatOutcome = 'pinged' | 'in_card' | 'skipped' | 'gave_up';

export interface SettingsTable {
  key: string;
  value: string;
  updated_at: number;
}

/**
 * Events counted in sliding windows: `accepted` (a new lead or a repeat, keyed by the visitor's ip_hash; the
 * per-visitor and hourly limits) and `secret_failure` (a wrong secret, keyed by a hash of the caller's address).
 */
export type RateEventKind = 'accepted' | 'secret_failure';
export interface RateEventsTable {
  id: Generated<number>;
  kind: RateEventKind;
  key_hash: string;
  at: number;
}

/** When each throttled admin alert was last sent, so throttles survive a restart. */
export interface AlertThrottlesTable {
  key: string;
  last_sent_at: number;
}

export interface LeadStatusChangesTable {
  id: Generated<number>;
  lead_id: number;
  from_status: LeadStatus;
  to_status: LeadStatus;
  user_id: number;
  user_name: string;
  at: number;
}

export interface JobRunsTable {
  key: string;
  at: number;
}

/** What happened to a lead, for its trace. No personal data in `detail`: errors, ids, statuses. */
export type LeadEventKind =
  | 'publish_failed'
  | 'publish_deferred'
  | 'published'
  | 'published_plain'
  | 'published_minimal'
  | 'card_rewritten'
  | 'card_rewrite_failed'
  | 'card_gone'
  | 'repeat_notified'
  | 'repeat_notify_failed'
  | 'repeat_gave_up'
  | 'repeat_skipped'
  | 'reminded'
  | 'anonymised';

export interface LeadEventsTable {
  id: Generated<number>;
  lead_id: number;
  repeat_id: number | null;
  kind: LeadEventKind;
  at: number;
  detail: string | null;
}

export interface Database {
  leads: LeadsTable;
  lead_repeats: LeadRepeatsTable;
  rate_events: RateEventsTable;
  alert_throttles: AlertThrottlesTable;
  settings: SettingsTable;
  lead_status_changes: LeadStatusChangesTable;
  job_runs: JobRunsTable;
  lead_events: LeadEventsTable;
}

export type Lead = Selectable<LeadsTable>;
export type NewLead = Insertable<LeadsTable>;
export type LeadUpdate = Updateable<LeadsTable>;
export type LeadRepeat = Selectable<LeadRepeatsTable>;
export type NewLeadRepeat = Insertable<LeadRepeatsTable>;
