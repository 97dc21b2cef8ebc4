import type { Generated, Insertable } from 'kysely';

import type { LeadStatus } from '../domain/lead-status';
import type { Lead, LeadRepeat } from '../domain/lead';
import type { MessageDirection, MessageMedia, MessageState } from '../domain/lead-message';

/**
 * The tables' types for Kysely; the lead's and the repeat's rows are the domain's (domain/lead.ts), with the columns
 * the database fills. Times are milliseconds since the epoch (UTC) throughout.
 */
type WithDefaults<Row, K extends keyof Row> = Omit<Row, K> & { [P in K]: Generated<Row[P]> };

export type LeadsTable = Database['leads'];

/**
 * Events counted in sliding windows, keyed by a hash: `accepted` (a request in time, by the visitor's ip_hash), `late`
 * (one replayed from a landing's spool, counted apart), `secret_failure` (a wrong secret, by the caller's address).
 */
export type RateEventKind = 'accepted' | 'late' | 'secret_failure';

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

export interface Database {
  leads: WithDefaults<Lead, 'id' | 'status' | 'updated_at'>;
  lead_repeats: WithDefaults<LeadRepeat, 'id'>;
  rate_events: { id: Generated<number>; kind: RateEventKind; key_hash: string; at: number };
  /** Accepted submissions per minute (`minute`: ms / 60000, rounded down): the hourly limit's bounded read. */
  rate_minutes: { kind: RateEventKind; minute: number; n: number };
  /** When each throttled admin alert was last sent, so throttles survive a restart. */
  alert_throttles: { key: string; last_sent_at: number };
  settings: { key: string; value: string; updated_at: number };
  lead_status_changes: {
    id: Generated<number>;
    lead_id: number;
    from_status: LeadStatus;
    to_status: LeadStatus;
    user_id: number;
    user_name: string;
    at: number;
  };
  /** Once-per-period jobs run (`digest:2026-11-29`). */
  job_runs: { key: string; at: number };
  lead_events: LeadEventsTable;
  /** Who does a once-across-instances job for now (`holder`: host, pid, random) and until when. */
  leases: { name: string; holder: string; until: number };
  webhook_sources: WebhookSourcesTable;
  webhook_events: WebhookEventsTable;
  outbox: OutboxTable;
  /**
   * Webhook mode: a Telegram update an instance took (`seen_at`) and when its handling ended (null while it runs, or
   * if its instance died), so that a second delivery is not handled again. Pruned a day after `seen_at`.
   */
  telegram_updates: { update_id: number; seen_at: number; handled_at: number | null };
  /**
   * What `/stickers_forget` erased, without the contact: ContactHasher's HMAC of a normalised username or phone and
   * its latest erasure. A late replay sent before that is stored anonymised; pruned after LATE_MAX_AGE_MS.
   */
  erased_contacts: { contact_hash: string; erased_at: number };
  telegram_links: TelegramLinksTable;
  lead_messages: LeadMessagesTable;
}

/** A "Continue in Telegram" link: the SHA-256 of its payload, its lead, until when it opens the bot, who used it, when. */
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
  /** The visitor sent `/stop`: the bot no longer writes to them for this lead. */
  stopped_at: number | null;
  /** Telegram answered a send to the visitor with "bot was blocked by the user". */
  blocked_at: number | null;
  /** The person chose this lead for their messages (its button); the newest choice wins. */
  chosen_at: number | null;
}

/**
 * One message of a lead's conversation: `in` from the visitor (relayed into the group), `out` from the team (sent to
 * the visitor). `tg_*`: the original in Telegram (none for the inbox's); `copy_*`: the copy once sent.
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
export type NewLeadRepeat = Insertable<Database['lead_repeats']>;

/** Signed webhooks (docs/api.md "Webhooks"): the events sent to `LEADS_WEBHOOK_URL`. */
export const WEBHOOK_EVENT_TYPES = ['lead.created', 'lead.repeat', 'lead.status_changed', 'lead.anonymised', 'lead.message'] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/**
 * Where each event type's announcements start: the rows of its source table with an id above `since_id`, the highest
 * when webhooks were first configured (history is never announced).
 */
export interface WebhookSourcesTable {
  type: WebhookEventType;
  since_id: number;
  created_at: number;
}

/**
 * One event, announced to every endpoint configured when it was recorded; at most one per row that records a change
 * (`source_id`). `data`: JSON of the event's own facts, never personal data.
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

/** One effect on the outside world: retried until done, claimed by one instance at a time, in order per lead and target. */
export interface OutboxTable {
  id: Generated<number>;
  kind: OutboxKind;
  lead_id: number;
  /** The repeat a ping or a repeat's fallback reply is for. */
  repeat_id: number | null;
  /** The webhook event a delivery sends. */
  event_id: number | null;
  /** The conversation's message a `visitor_message` or `team_message` row sends. */
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
