import { Injectable } from '@nestjs/common';
import { isUuidV4, SOURCE_KEYS, type LeadSource } from '@stickers/shared';
import { SOURCE_COLUMN } from '../domain/personal-fields';
import type { ConsentColumns, LateColumns, SourceColumns } from '../domain/lead';
import { TraceRepository } from '../repositories/trace.repository';

/** How a late request came: the landing's route then, and when the server got it. Null for the others. */
export interface LateTrace {
  route: string;
  reason: string | null;
  submitted_at: number;
  received_at: number | null;
}

/** The landing's fallback message of the request, and what the outbox did with it. */
export interface FallbackTrace {
  chat_id: string;
  message_id: number;
  sent_at: number | null;
  state: string | null;
  reply_attempts: number;
}

/** How a request (the lead's or a repeat's) came; its source and consent as sent, absent without. */
interface RequestTrace {
  late: LateTrace | null;
  fallback: FallbackTrace | null;
  source?: LeadSource;
  consent?: ConsentTrace;
}

export interface LeadTrace {
  found: true;
  /** What was asked for, and whether it named the lead itself or one of its repeats. */
  key: string;
  matched: 'lead' | 'repeat' | 'lead_number';
  lead: {
    lead_number: number;
    request_id: string;
    created_at: number;
    status: string;
    published_at: number | null;
    chat_id: string | null;
    message_id: number | null;
    /** The card's forum topic; absent when none. */
    thread_id?: number;
    card_format: string | null;
    publish_attempts: number;
    last_error: string | null;
    next_attempt_at: number | null;
    reminded_at: number | null;
    anonymised_at: number | null;
    received_at: number | null;
  } & RequestTrace;
  repeats: ({
    request_id: string;
    created_at: number;
    changed_fields: string[];
    notified_at: number | null;
    notify_outcome: string | null;
    notify_attempts: number;
    last_error: string | null;
  } & RequestTrace)[];
  status_history: { at: number; from: string; to: string; by: string; user_id: number }[];
  events: { at: number; kind: string; detail: string | null; repeat_request_id: string | null }[];
  /** The conversation with the visitor in Telegram (no text, no names: those are personal). */
  messages: { at: number; direction: string; media: string | null; state: string; error: string | null }[];
}

export interface ConsentTrace {
  accepted_at: number;
  policy_url: string;
}

export interface MissingTrace {
  found: false;
  key: string;
  message: string;
}

export const NOT_IN_DATABASE =
  'not in the database: check the fallback channel (a message in the leads group starting with "⚠️ Запасной канал" and this request_id); ' +
  "it may still wait in the landing's spool (LANDING_SPOOL_DIR; the landing replays it once the server takes it)";

/** A key that is neither: what a key looks like (a word such as "hello" is not an unknown request, it is no request). */
export const NOT_A_KEY =
  'not a request_id or a lead number: give the request_id the landing or the integration sent (a UUID such as ' +
  '0f8fad5b-d9cb-469f-a165-70867728950e) or the lead number of its card (42 or #42)';

/** The story of a request, without personal data, for the CLI and `GET /leads/:request_id/trace` (trace.dto.ts). */
@Injectable()
export class TraceService {
  constructor(private readonly trace: TraceRepository) {}

  /** `rawKey`: a request_id (of the lead or of one of its repeats), or a lead number (`42`, `#42`). */
  async read(rawKey: string): Promise<LeadTrace | MissingTrace> {
    const key = rawKey.trim().toLowerCase();
    let leadId: number | undefined;
    let matched: LeadTrace['matched'] = 'lead';
    const number = /^#?(\d{1,15})$/.exec(key);
    if (number) {
      leadId = Number(number[1]);
      matched = 'lead_number';
    } else if (!isUuidV4(key)) {
      return { found: false, key: rawKey, message: NOT_A_KEY };
    } else {
      leadId = await this.trace.leadIdOfRequest(key);
      if (leadId === undefined) {
        leadId = await this.trace.leadIdOfRepeat(key);
        if (leadId !== undefined) matched = 'repeat';
      }
    }
    const lead = leadId === undefined ? undefined : await this.trace.lead(leadId);
    if (!lead) return { found: false, key: rawKey, message: NOT_IN_DATABASE };

    const repeats = await this.trace.repeats(lead.id);
    const requestOf = new Map(repeats.map((r) => [r.id, r.request_id]));
    const history = await this.trace.statusChanges(lead.id);
    const events = await this.trace.events(lead.id);
    const rows = await this.trace.outbox(lead.id);
    const messages = await this.trace.messages(lead.id);
    // Failures per kind (and repeat) over the lead's outbox rows; the waiting card row's next time and last error.
    const failures = (kind: string, repeatId: number | null) =>
      rows.filter((o) => o.kind === kind && o.repeat_id === repeatId).reduce((n, o) => n + o.attempts, 0);
    const waitingCard = rows.find((o) => o.kind === 'card' && o.done_at === null);
    const waitingPing = (repeatId: number) => rows.find((o) => o.kind === 'repeat_ping' && o.repeat_id === repeatId && o.done_at === null);
    return {
      found: true,
      key: rawKey,
      matched,
      lead: {
        lead_number: lead.id,
        request_id: lead.request_id,
        created_at: lead.created_at,
        status: lead.status,
        published_at: lead.published_at,
        chat_id: lead.chat_id,
        message_id: lead.message_id,
        ...(lead.card_thread_id !== null ? { thread_id: lead.card_thread_id } : {}),
        card_format: lead.card_format,
        publish_attempts: failures('card', null),
        last_error: (lead.published_at === null ? waitingCard?.last_error : null) ?? lead.last_error,
        next_attempt_at: lead.published_at === null ? (waitingCard?.next_at ?? null) : null,
        reminded_at: lead.reminded_at,
        anonymised_at: lead.anonymised_at,
        received_at: lead.received_at,
        late: lateOf(lead),
        fallback: fallbackOf(lead, failures('fallback_reply', null)),
        ...sourceOf(lead),
        ...consentOf(lead),
      },
      repeats: repeats.map((r) => ({
        request_id: r.request_id,
        created_at: r.created_at,
        changed_fields: Object.keys(JSON.parse(r.changes) as object),
        notified_at: r.notified_at,
        notify_outcome: r.notify_outcome,
        notify_attempts: failures('repeat_ping', r.id),
        last_error: r.last_error ?? waitingPing(r.id)?.last_error ?? null,
        late: lateOf(r),
        fallback: fallbackOf(r, failures('fallback_reply', r.id)),
        ...sourceOf(r),
        ...consentOf(r),
      })),
      status_history: history.map((h) => ({ at: h.at, from: h.from_status, to: h.to_status, by: h.user_name, user_id: h.user_id })),
      events: events.map((e) => ({
        at: e.at,
        kind: e.kind,
        detail: e.detail,
        repeat_request_id: e.repeat_id !== null ? (requestOf.get(e.repeat_id) ?? null) : null,
      })),
      messages,
    };
  }
}

type LateRow = Pick<LateColumns, 'late_route' | 'late_reason' | 'received_at'> & { created_at: number };
type FallbackRow = Pick<LateColumns, 'fallback_chat_id' | 'fallback_message_id' | 'fallback_sent_at' | 'fallback_state'>;

// `?? null` and `== null`: the CLI may read a database the new columns have not reached yet (the server not restarted).
function lateOf(row: LateRow): LateTrace | null {
  const route = row.late_route ?? null;
  if (route === null) return null;
  return { route, reason: row.late_reason ?? null, submitted_at: row.created_at, received_at: row.received_at ?? null };
}

function fallbackOf(row: FallbackRow, replyAttempts: number): FallbackTrace | null {
  const chatId = row.fallback_chat_id ?? null;
  const messageId = row.fallback_message_id ?? null;
  if (chatId === null || messageId === null) return null;
  return {
    chat_id: chatId,
    message_id: messageId,
    sent_at: row.fallback_sent_at,
    state: row.fallback_state,
    reply_attempts: replyAttempts,
  };
}

/** `{ source }` with the values the request sent, or nothing: a lead without a source traces as before. */
function sourceOf(row: Partial<SourceColumns>): { source?: LeadSource } {
  const source: LeadSource = Object.fromEntries(
    SOURCE_KEYS.map((k): [string, string | null | undefined] => [k, row[SOURCE_COLUMN[k]]]).filter(([, v]) => v != null),
  );
  return Object.keys(source).length > 0 ? { source } : {};
}

/** `{ consent }` when the request carried one, or nothing. */
function consentOf(row: Partial<ConsentColumns>): { consent?: ConsentTrace } {
  const at = row.consent_accepted_at ?? null;
  const url = row.consent_policy_url ?? null;
  return at !== null && url !== null ? { consent: { accepted_at: at, policy_url: url } } : {};
}
