import type { Generated, Insertable, Updateable } from 'kysely';

import type { LeadStatus } from '../domain/lead-status';
import type { Lead, LeadRepeat } from '../domain/lead';
import type { MessageDirection, MessageMedia, MessageState } from '../domain/lead-message';

/**
 * The tables' types for Kysely. The lead's and the repeat's rows are the domain's (domain/lead.ts): storage adds
 * only which of their columns the database fills when an insert leaves them out. Times are milliseconds since the
 * epoch (UTC) throughout.
 */
type WithDefaults<Row, K extends keyof Row> = Omit<Row, K> & { [P in K]: Generated<Row[P]> };

export type LeadsTable = WithDefaults<Lead, 'id' | 'status' | 'updated_at'>;
export type LeadRepeatsTable = WithDefaults<LeadRepeat, 'id'>;

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

/** Accepted submissions per minute: the hourly limit's bounded read. */
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
  /** Stored from the landing's spool (its route, reason and fallback message in the detail). */
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
  /** Signed webhooks: an endpoint answered 2xx to a delivery of one of the lead's events. */
  | 'webhook_sent'
  /** A delivery attempt failed (not 2xx, a network error, 10 s without an answer); the next attempt's time in the detail. */
  | 'webhook_failed'
  /** `npm run leads -- webhooks replay` queued an event of the lead again. */
  | 'webhook_replayed'
  /** "Continue in Telegram": a visitor opened the lead's link and the bot bound their Telegram account (no personal data in the detail: the account is on the link's row). */
  | 'telegram_bound';

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

/** Who does a once-across-instances job for now: the outbox, housekeeping, polling. */
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
  outbox: OutboxTable;
  telegram_updates: TelegramUpdatesTable;
  erased_contacts: ErasedContactsTable;
  telegram_links: TelegramLinksTable;
  lead_messages: LeadMessagesTable;
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

/**
 * A "Continue in Telegram" link (migration 2026-12-05-0021): the SHA-256 of its payload, its lead, until when it opens
 * the bot, when it was used (once) and the Telegram account that used it.
 */
export interface TelegramLinksTable {
  payload_hash: string;
  lead_id: number;
  created_at: number;
  expires_at: number;
  used_at: number | null;
  tg_user_id: number | null;
  tg_username: string | null;
  tg_first_name: string | null;
  tg_last_name: string | null;
  /** The visitor sent `/stop` (migration 2026-12-05-0022): the bot no longer writes to them for this lead. */
  stopped_at: number | null;
  /** Telegram answered a send to the visitor with "bot was blocked by the user". */
  blocked_at: number | null;
  /** The person chose this lead for their messages (its button, migration 2026-12-05-0024); the newest choice wins. */
  chosen_at: number | null;
}

/**
 * One message of a lead's conversation (migration 2026-12-05-0022): `in` from the visitor (relayed into the group),
 * `out` from the team (a member's reply in the group, or the inbox; sent to the visitor). `tg_*`: the original in
 * Telegram (none for the inbox's); `copy_*`: the copy once sent (in the group, or in the visitor's chat).
 */
export interface LeadMessagesTable {
  id: Generated<number>;
  lead_id: number;
  direction: MessageDirection;
  /** The author's Telegram user id (the visitor, the member, the inbox's user); null when none is known. */
  author_tg_id: number | null;
  author_name: string | null;
  at: number;
  /** The text, or a media message's caption. */
  text: string | null;
  media: MessageMedia | null;
  tg_chat_id: string | null;
  tg_message_id: number | null;
  copy_chat_id: string | null;
  copy_message_id: number | null;
  state: MessageState;
  error: string | null;
}

/** A lead's row as inserted (the columns with defaults may be left out). */
export type NewLead = Insertable<LeadsTable>;
export type LeadUpdate = Updateable<LeadsTable>;
export type NewLeadRepeat = Insertable<LeadRepeatsTable>;

/** Signed webhooks (docs/api.md "Webhooks"): the events sent to `LEADS_WEBHOOK_URL`. */
export const WEBHOOK_EVENT_TYPES = ['lead.created', 'lead.repeat', 'lead.status_changed', 'lead.anonymised', 'lead.message'] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/**
 * Where each event type's announcements start (migration 2026-12-01-0008): the rows of its source table (`leads`,
 * `lead_repeats`, `lead_status_changes`, `lead_events` of kind `anonymised`, `lead_messages`) with an id above `since_id` are
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

/** What an outbox row does (docs/architecture.md, "The outbox"). */
export const OUTBOX_KINDS = ['card', 'card_edit', 'repeat_ping', 'fallback_reply', 'webhook', 'visitor_message', 'team_message'] as const;
export type OutboxKind = (typeof OUTBOX_KINDS)[number];

/**
 * One effect on the outside world (migration 2026-12-05-0018): retried on its schedule until done, claimed by one
 * instance at a time, in order per lead and target.
 */
export interface OutboxTable {
  id: Generated<number>;
  kind: OutboxKind;
  lead_id: number;
  /** The repeat a ping or a repeat's fallback reply is for. */
  repeat_id: number | null;
  /** The webhook event a delivery sends. */
  event_id: number | null;
  /** The conversation's message a `visitor_message` or `team_message` row sends (migration 2026-12-05-0022). */
  message_id: number | null;
  /** `telegram`, or the webhook endpoint's URL as configured (its secret comes from the configuration). */
  target: string;
  /** Set when `npm run leads -- webhooks replay` queued a delivery again. */
  replayed_at: number | null;
  /** When the change that caused it happened (ms). */
  created_at: number;
  /** Not before this time (ms, the app's clock): due at once, after a failure, after a flood pause. */
  next_at: number;
  attempts: Generated<number>;
  /** The first failed attempt (the webhook alert is raised once one has failed for 30 minutes). */
  first_failed_at: number | null;
  last_error: string | null;
  /** The instance working on it, and until when (wall-clock ms): another instance takes it only after that. */
  claimed_by: string | null;
  claimed_until: number | null;
  done_at: number | null;
  /** How it ended: `sent`, `delivered`, `skipped`, `gave_up`, `left`, … (free text for the trace). */
  outcome: string | null;
}
