import { Injectable } from '@nestjs/common';
import { isUuidV4, SOURCE_KEYS, type LeadSource } from '@stickers/shared';
import { SOURCE_COLUMN, type SourceColumns } from '../domain/personal-fields';
import { leadNumberOf, parseRepeatChanges, type ConsentColumns, type LateColumns } from '../domain/lead';
import { LeadPagesRepository } from '../repositories/lead-pages.repository';

export const NOT_IN_DATABASE =
  'not in the database: check the fallback channel (a message in the leads group starting with ' +
  '"⚠️ Запасной канал" or "⚠️ Fallback channel", as LANDING_LOCALE says, with this request_id); ' +
  "it may still wait in the landing's spool (LANDING_SPOOL_DIR; the landing replays it once the server takes it)";

/** A number no lead has: a request the server never stored has no number, so it is traced by its request_id. */
export const NO_SUCH_NUMBER =
  'no lead has this number: a number is given when the server stores a lead (it is on its card); a request that did not ' +
  'reach the database has none: trace it by its request_id';

/** A key that is neither (a word such as "hello" is no request, not an unknown one). */
const NOT_A_KEY =
  'not a request_id or a lead number: give the request_id the landing or the integration sent (a UUID such as ' +
  '0f8fad5b-d9cb-469f-a165-70867728950e) or the lead number of its card (42 or #42)';

export type TraceResult = Awaited<ReturnType<TraceService['read']>>;
export type LeadTrace = Extract<TraceResult, { found: true }>;

/** The story of a request, without personal data, for the CLI and `GET /leads/:request_id/trace` (trace.dto.ts). */
@Injectable()
export class TraceService {
  constructor(private readonly trace: LeadPagesRepository) {}

  /** `rawKey`: a request_id (of the lead or of one of its repeats), or a lead number (`42`, `#42`). */
  async read(rawKey: string) {
    const key = rawKey.trim().toLowerCase();
    const number = leadNumberOf(key);
    if (number === null && !isUuidV4(key)) return { found: false as const, key: rawKey, message: NOT_A_KEY };
    const request = number === null ? await this.trace.leadOfRequest(key) : undefined;
    const matched = number !== null ? 'lead_number' : request?.repeat ? 'repeat' : 'lead';
    const leadId = number ?? request?.leadId;
    const lead = leadId === undefined ? undefined : await this.trace.lead(leadId);
    if (!lead) return { found: false as const, key: rawKey, message: number === null ? NOT_IN_DATABASE : NO_SUCH_NUMBER };

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
      found: true as const,
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
        ...requestTrace(lead, failures('fallback_reply', null)),
      },
      repeats: repeats.map((r) => ({
        request_id: r.request_id,
        created_at: r.created_at,
        changed_fields: Object.keys(parseRepeatChanges(r.changes)),
        notified_at: r.notified_at,
        notify_outcome: r.notify_outcome,
        notify_attempts: failures('repeat_ping', r.id),
        last_error: r.last_error ?? waitingPing(r.id)?.last_error ?? null,
        ...requestTrace(r, failures('fallback_reply', r.id)),
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

type RequestRow = LateColumns & Partial<SourceColumns & ConsentColumns> & { created_at: number };

/** How a request (the lead's or a repeat's) came. `?? null`: the CLI may read a database the new columns have not reached yet. */
function requestTrace(row: RequestRow, replyAttempts: number) {
  const route = row.late_route ?? null;
  const [chatId, messageId] = [row.fallback_chat_id ?? null, row.fallback_message_id ?? null];
  const source: LeadSource = Object.fromEntries(
    SOURCE_KEYS.map((k): [string, string | null | undefined] => [k, row[SOURCE_COLUMN[k]]]).filter(([, v]) => v != null),
  );
  const [acceptedAt, policyUrl] = [row.consent_accepted_at ?? null, row.consent_policy_url ?? null];
  return {
    late:
      route === null
        ? null
        : { route, reason: row.late_reason ?? null, submitted_at: row.created_at, received_at: row.received_at ?? null },
    fallback:
      chatId === null || messageId === null
        ? null
        : {
            chat_id: chatId,
            message_id: messageId,
            sent_at: row.fallback_sent_at,
            state: row.fallback_state,
            reply_attempts: replyAttempts,
          },
    ...(Object.keys(source).length > 0 ? { source } : {}),
    ...(acceptedAt !== null && policyUrl !== null ? { consent: { accepted_at: acceptedAt, policy_url: policyUrl } } : {}),
  };
}
