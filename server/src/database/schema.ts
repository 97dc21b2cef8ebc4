import type { Generated, Insertable, Selectable, Updateable } from 'kysely';

/** Lead statuses (docs/requirements.md §5.1). */
export const LEAD_STATUSES = ['new', 'in_progress', 'won', 'lost', 'spam'] as const;
export type LeadStatus = (typeof LEAD_STATUSES)[number];

/** Times are milliseconds since the epoch (UTC) throughout. */
export interface LeadsTable extends LateColumns, SourceColumns {
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
  /**
   * Issue 14 (migration 2026-12-01-0009): the forum topic (`message_thread_id`) the card went into, null for the
   * chat's General topic (or a chat without topics). Replies to the card (repeat pings, reminders) go there too.
   */
  card_thread_id: number | null;
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

/**
 * What the outbox does with a late lead's fallback message (issue 12): `pending` — not looked at yet (a lead's may
 * become its card); `adopted` — it is the lead's card now; `answer` — it gets a reply saying the lead is in the
 * database (the card went out as a new message, or it is a repeat's); `answered` — replied; `gone` — deleted, nothing
 * to reply to; `refused` — Telegram refused the reply (another chat the bot cannot write in); `gave_up` — the reply
 * failed 5 times.
 */
export const FALLBACK_STATES = ['pending', 'adopted', 'answer', 'answered', 'gone', 'refused', 'gave_up'] as const;
export type FallbackState = (typeof FALLBACK_STATES)[number];

/** A late lead's or repeat's arrival and its fallback message (migration 2026-12-01-0005). */
export interface LateColumns {
  /** When the server got it: created_at for every request that came in time, later for one replayed from the spool. */
  received_at: number | null;
  /** The landing's route and its reason when the request did not reach the database (`fallback` / `503`); else null. */
  late_route: string | null;
  late_reason: string | null;
  fallback_chat_id: string | null;
  fallback_message_id: number | null;
  fallback_sent_at: number | null;
  fallback_state: FallbackState | null;
  /** Failed replies to the fallback message, and when the next is due (state `answer`). */
  fallback_attempts: Generated<number>;
  fallback_next_at: number | null;
}

/**
 * Where a lead or a repeat came from (issue 14, migration 2026-12-01-0006): the `source` object of `POST /leads` as
 * checked by `checkSource` of @stickers/shared, one column per key. All null when the request had none.
 */
export interface SourceColumns {
  /** `source.landing`: the landing's own name (LANDING_SOURCE). */
  source_landing: string | null;
  utm_source: string | null;
  utm_medium: string | null;
  utm_campaign: string | null;
  utm_content: string | null;
  utm_term: string | null;
  /** `source.referrer`: the referrer's host only. */
  source_referrer: string | null;
}

export interface LeadRepeatsTable extends LateColumns, SourceColumns {
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
/** `accepted`: a request that came in time; `late`: one replayed from a landing's spool (counted apart). */
export type RateEventKind = 'accepted' | 'late' | 'secret_failure';
export interface RateEventsTable {
  id: Generated<number>;
  kind: RateEventKind;
  key_hash: string;
  at: number;
}

/** Accepted submissions per minute (issue 15): the hourly limit's bounded read. */
export interface RateMinutesTable {
  kind: RateEventKind;
  /** ms since the epoch / 60000, rounded down. */
  minute: number;
  n: number;
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
  | 'anonymised'
  /** Issue 12: stored from the landing's spool (its route, reason and fallback message in the detail). */
  | 'received_late'
  /** The fallback message was edited into the lead's card. */
  | 'fallback_adopted'
  /** It could not be (another bot's, deleted, another chat, refused): the card went out as a new message. */
  | 'fallback_not_adopted'
  /** The fallback message got its reply `✅ Заявка в базе: …`. */
  | 'fallback_answered'
  | 'fallback_answer_failed'
  /** No reply: the message is deleted, Telegram refused, or 5 failures. */
  | 'fallback_left'
  /** Issue 14, signed webhooks: an endpoint answered 2xx to a delivery of one of the lead's events. */
  | 'webhook_sent'
  /** A delivery attempt failed (not 2xx, a network error, 10 s without an answer); the next attempt's time in the detail. */
  | 'webhook_failed'
  /** `npm run leads -- webhooks replay` queued an event of the lead again. */
  | 'webhook_replayed';

export interface LeadEventsTable {
  id: Generated<number>;
  lead_id: number;
  repeat_id: number | null;
  kind: LeadEventKind;
  at: number;
  detail: string | null;
}

/**
 * Webhook mode (migration 2026-12-01-0012): a Telegram update an instance took, so that a second delivery of the same
 * `update_id` is not handled again. Pruned a day after `seen_at`.
 */
export interface TelegramUpdatesTable {
  update_id: number;
  /** ms since the epoch: when an instance took it for handling (again, after a claim left unfinished too long). */
  seen_at: number;
  /** ms since the epoch: when its handling ended; null while it runs (or if its instance died meanwhile). */
  handled_at: number | null;
}

/** Who does a once-across-instances job for now (issue 13): the outbox, housekeeping, polling. */
export interface LeasesTable {
  name: string;
  /** The instance's id (host, pid, random). */
  holder: string;
  /** ms since the epoch; after it any instance may take the lease. */
  until: number;
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
  leases: LeasesTable;
  rate_minutes: RateMinutesTable;
  webhook_sources: WebhookSourcesTable;
  webhook_events: WebhookEventsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  telegram_updates: TelegramUpdatesTable;
  erased_contacts: ErasedContactsTable;
}

/**
 * What `/stickers_forget` erased (migration 2026-12-01-0013), without the contact itself: `contact_hash` is
 * `ContactHasher`'s HMAC-SHA256 (LEADS_IP_SALT) of a normalised username or phone, `erased_at` its latest erasure (ms).
 * A late replay the visitor sent before that time is stored anonymised; pruned 30 days after (LATE_MAX_AGE_MS).
 */
export interface ErasedContactsTable {
  contact_hash: string;
  erased_at: number;
}

export type Lead = Selectable<LeadsTable>;
export type NewLead = Insertable<LeadsTable>;
export type LeadUpdate = Updateable<LeadsTable>;
export type LeadRepeat = Selectable<LeadRepeatsTable>;
export type NewLeadRepeat = Insertable<LeadRepeatsTable>;

/** Issue 14, signed webhooks (docs/api.md "Webhooks"): the events sent to `LEADS_WEBHOOK_URL`. */
export const WEBHOOK_EVENT_TYPES = ['lead.created', 'lead.repeat', 'lead.status_changed', 'lead.anonymised'] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/**
 * Where each event type's announcements start (migration 2026-12-01-0008): the rows of its source table (`leads`,
 * `lead_repeats`, `lead_status_changes`, `lead_events` of kind `anonymised`) with an id above `since_id` are
 * announced; `since_id` is the highest id when webhooks were first configured, so history is never announced.
 */
export interface WebhookSourcesTable {
  type: WebhookEventType;
  since_id: number;
  created_at: number;
}

/**
 * One event, announced to every endpoint configured when it was recorded. `source_id` is the id of the row that
 * records the change (a lead, a repeat, a status change, an `anonymised` lead event): one event per row at most.
 * `data` is JSON of the event's own facts, never personal data (the lead is read when a delivery is sent).
 */
export interface WebhookEventsTable {
  id: Generated<number>;
  /** The body's `id` (`evt_` and 32 hex digits). */
  public_id: string;
  lead_id: number;
  type: WebhookEventType;
  source_id: number;
  /** When the change happened (ms); the body's `created_at`. */
  at: number;
  data: string;
}

/** One event to one endpoint: the durable outbox of the webhooks, retried on the cards' schedule until a 2xx. */
export interface WebhookDeliveriesTable {
  id: Generated<number>;
  event_id: number;
  /** Copied from the event: a delivery waits while an earlier one of the same lead and endpoint is not delivered. */
  lead_id: number;
  /** The endpoint's URL as configured (LEADS_WEBHOOK_URL); its secret comes from the configuration. */
  endpoint: string;
  /** Set when `npm run leads -- webhooks replay` queued this delivery again; null for the first one. */
  replayed_at: number | null;
  created_at: number;
  attempts: Generated<number>;
  next_attempt_at: number;
  /** The first failed attempt of this delivery: the alert is raised once it has failed for 30 minutes. */
  first_failed_at: number | null;
  last_error: string | null;
  delivered_at: number | null;
}
