import type { Generated, Insertable } from 'kysely';
import type { LeadStatus } from '../domain/lead-status';
import type { Lead, LeadRepeat } from '../domain/lead';
import type { MessageDirection, MessageMedia, MessageState } from '../domain/lead-message';

/* The tables' types for Kysely; the lead's and the repeat's rows are the domain's. Times are ms since the epoch (UTC). */

type WithDefaults<Row, K extends keyof Row> = Omit<Row, K> & { [P in K]: Generated<Row[P]> };

/** Events counted in sliding windows: `accepted` (by ip_hash), `late` (replayed from a spool), `secret_failure` (by caller). */
export type RateEventKind = 'accepted' | 'late' | 'secret_failure';

/** What happened to a lead, for its trace; no personal data in `detail`. */
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
  | 'reminder_failed'
  | 'anonymised'
  | 'received_late'
  | 'fallback_adopted'
  | 'fallback_not_adopted'
  | 'fallback_answered'
  | 'fallback_answer_failed'
  | 'fallback_left'
  | 'webhook_sent'
  | 'webhook_failed'
  | 'webhook_replayed'
  | 'telegram_bound';

export const WEBHOOK_EVENT_TYPES = [
  'lead.created',
  'lead.repeat',
  'lead.status_changed',
  'lead.anonymised',
  'lead.telegram_bound',
  'lead.message',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

export const OUTBOX_KINDS = ['card', 'card_edit', 'repeat_ping', 'fallback_reply', 'webhook', 'visitor_message', 'team_message'] as const;
export type OutboxKind = (typeof OUTBOX_KINDS)[number];

export interface Database {
  leads: WithDefaults<Lead, 'id' | 'status' | 'updated_at'>;
  lead_repeats: WithDefaults<LeadRepeat, 'id'>;
  rate_events: { id: Generated<number>; kind: RateEventKind; key_hash: string; at: number };
  /** Accepted submissions per minute (`minute`: ms / 60000, rounded down): the hourly limit's bounded read. */
  rate_minutes: { kind: RateEventKind; minute: number; n: number };
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
  job_runs: { key: string; at: number };
  lead_events: { id: Generated<number>; lead_id: number; repeat_id: number | null; kind: LeadEventKind; at: number; detail: string | null };
  leases: { name: string; holder: string; until: number };
  /** Each event type announces its source table's rows above `since_id` (history is never announced). */
  webhook_sources: { type: WebhookEventType; since_id: number; created_at: number };
  /** At most one event per row that records a change (`source_id`); `data`: JSON of its facts, never personal data. */
  webhook_events: {
    id: Generated<number>;
    public_id: string;
    lead_id: number;
    type: WebhookEventType;
    source_id: number;
    at: number;
    data: string;
  };
  outbox: {
    id: Generated<number>;
    kind: OutboxKind;
    lead_id: number;
    /** The repeat a ping or a repeat's fallback reply is for; the webhook event a delivery sends; the message sent. */
    repeat_id: number | null;
    event_id: number | null;
    message_id: number | null;
    /** `telegram`, or the webhook endpoint's URL as configured (its secret comes from the configuration). */
    target: string;
    /** Set when `npm run leads -- webhooks replay` queued a delivery again. */
    replayed_at: number | null;
    created_at: number;
    /** Not before this time (the app's clock). */
    next_at: number;
    attempts: Generated<number>;
    first_failed_at: number | null;
    last_error: string | null;
    /** The instance working on it, and until when (wall-clock ms). */
    claimed_by: string | null;
    claimed_until: number | null;
    done_at: number | null;
    /** How it ended (free text for the trace). */
    outcome: string | null;
  };
  /** Webhook mode: an update an instance took, and when its handling ended. */
  telegram_updates: { update_id: number; seen_at: number; handled_at: number | null };
  /** What `/stickers_forget` erased: the HMAC of a normalised username or phone, and its latest erasure. */
  erased_contacts: { contact_hash: string; erased_at: number };
  /** A "Continue in Telegram" link by the SHA-256 of its payload; `chosen_at`: the visitor chose this lead for their messages. */
  telegram_links: {
    payload_hash: string;
    lead_id: number;
    created_at: number;
    expires_at: number;
    used_at: number | null;
    tg_user_id: number | null;
    tg_username: string | null;
    tg_first_name: string | null;
    tg_last_name: string | null;
    stopped_at: number | null;
    blocked_at: number | null;
    chosen_at: number | null;
  };
  /** One message of a lead's conversation: `tg_*` the original in Telegram (none for the inbox's), `copy_*` the copy sent. */
  lead_messages: {
    id: Generated<number>;
    lead_id: number;
    direction: MessageDirection;
    author_tg_id: number | null;
    author_name: string | null;
    /** A team message's recipient when it answers a relayed message (its author); null: the lead's visitor. */
    to_tg_id: number | null;
    at: number;
    text: string | null;
    media: MessageMedia | null;
    tg_chat_id: string | null;
    tg_message_id: number | null;
    copy_chat_id: string | null;
    copy_message_id: number | null;
    state: MessageState;
    error: string | null;
  };
  /** The bot's message about a lead besides its card (a ping, a reminder, a notice): a reply to it is a reply to the card. */
  lead_notices: { chat_id: string; message_id: number; lead_id: number };
}

export type NewLead = Insertable<Database['leads']>;
export type NewLeadRepeat = Insertable<Database['lead_repeats']>;
