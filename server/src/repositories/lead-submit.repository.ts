import { Injectable } from '@nestjs/common';
import type { Statement } from 'better-sqlite3';
import { DatabaseHandle } from '../database/database.module';
import type { Lead, LeadEventKind, NewLead, NewLeadRepeat } from '../database/schema';

export interface KnownRequest {
  leadId: number;
  repeat: boolean;
  /** The row of the request: the lead's id, or the repeat's. */
  rowId: number;
  /** Whether a fallback message of this request is recorded already. */
  hasFallback: boolean;
}

/** A fallback message reported for a request already stored (issue 12). */
export interface ReportedFallback {
  chatId: string;
  messageId: number;
  sentAt: number;
  now: number;
}

const LATE_FIELDS = [
  'received_at',
  'late_route',
  'late_reason',
  'fallback_chat_id',
  'fallback_message_id',
  'fallback_sent_at',
  'fallback_state',
  'fallback_next_at',
] as const;
/** Where the request came from (issue 14): null when it sent no `source`. */
const SOURCE_FIELDS = ['source_landing', 'utm_source', 'utm_medium', 'utm_campaign', 'utm_content', 'utm_term', 'source_referrer'] as const;
const LATE_COLUMNS = [...LATE_FIELDS, ...SOURCE_FIELDS].join(', ');
const LATE_VALUES = [...LATE_FIELDS, ...SOURCE_FIELDS].map((f) => `@${f}`).join(', ');
/** A request that came in time: no route, no fallback message; and one with no source. */
const NO_LATE = Object.fromEntries([...LATE_FIELDS, ...SOURCE_FIELDS].map((f) => [f, null]));

/** The queries of the submit decision, synchronous, inside one BEGIN IMMEDIATE. */
export interface SubmitQueries {
  findRequest(requestId: string): KnownRequest | undefined;
  /** The `limit`-th newest accepted submission inside the window (of one visitor, or of all), if any. */
  nthAccepted(keyHash: string | null, since: number, limit: number): number | null;
  recordAccepted(keyHash: string, at: number): void;
  /** The newest lead of this username or phone created in (since, until]. */
  findRepeatTarget(telegramKey: string, phone: string, since: number, until: number): Lead | undefined;
  insertLead(lead: NewLead): number;
  insertRepeat(repeat: NewLeadRepeat): number;
  /**
   * Records a fallback message for a stored request that has none: a lead without a card yet may still adopt it,
   * else (and for a repeat) it gets its reply. False when one was recorded meanwhile.
   */
  reportFallback(known: KnownRequest, fallback: ReportedFallback): boolean;
  /** An event of the lead's story, committed with the decision. */
  recordEvent(event: { leadId: number; repeatId: number | null; kind: LeadEventKind; at: number; detail: string }): void;
}

/**
 * The hot path of `POST /leads` as prepared better-sqlite3 statements in one synchronous `BEGIN IMMEDIATE`
 * (docs/requirements.md §1.1, steps 6–10). `npm run bench` showed the async query path costing more than the SQL
 * itself (docs/performance.md). The transaction is entered through Kysely's connection mutex, so it never runs inside
 * an open Kysely transaction (where better-sqlite3 would silently turn it into a savepoint, docs/performance.md).
 */
@Injectable()
export class LeadSubmitRepository {
  private readonly statements: Record<string, Statement>;
  private readonly queries: SubmitQueries;

  constructor(private readonly database: DatabaseHandle) {
    const s = database.sqlite;
    this.statements = {
      findRequest: s.prepare(
        'select id as lead_id, 0 as repeat, id as row_id, fallback_message_id is not null as has_fallback from leads where request_id = ? ' +
          'union all select lead_id, 1, id, fallback_message_id is not null from lead_repeats where request_id = ? limit 1',
      ),
      visitorNth: s.prepare(
        "select at from rate_events where kind = 'accepted' and key_hash = ? and at > ? order by at desc limit 1 offset ?",
      ),
      hourlyNth: s.prepare("select at from rate_events where kind = 'accepted' and at > ? order by at desc limit 1 offset ?"),
      record: s.prepare("insert into rate_events (kind, key_hash, at) values ('accepted', ?, ?)"),
      repeatTarget: s.prepare(
        'select * from leads where (telegram_key = ? or phone = ?) and created_at > ? and created_at <= ? ' +
          "and status != 'spam' and anonymised_at is null order by created_at desc, id desc limit 1",
      ),
      insertLead: s.prepare(
        `insert into leads (request_id, name, telegram, telegram_key, phone, date, guests, comment, ip_hash, created_at, next_attempt_at, ${LATE_COLUMNS}) ` +
          `values (@request_id, @name, @telegram, @telegram_key, @phone, @date, @guests, @comment, @ip_hash, @created_at, @next_attempt_at, ${LATE_VALUES})`,
      ),
      insertRepeat: s.prepare(
        `insert into lead_repeats (lead_id, request_id, created_at, changes, ip_hash, next_attempt_at, ${LATE_COLUMNS}) ` +
          `values (@lead_id, @request_id, @created_at, @changes, @ip_hash, @next_attempt_at, ${LATE_VALUES})`,
      ),
      // A lead that has no card yet can still take the message as its card; a published one, or a repeat, answers it.
      reportLeadFallback: s.prepare(
        'update leads set fallback_chat_id = @chat_id, fallback_message_id = @message_id, fallback_sent_at = @sent_at, ' +
          "fallback_state = case when published_at is null then 'pending' else 'answer' end, fallback_next_at = @now " +
          'where id = @id and fallback_message_id is null',
      ),
      reportRepeatFallback: s.prepare(
        'update lead_repeats set fallback_chat_id = @chat_id, fallback_message_id = @message_id, fallback_sent_at = @sent_at, ' +
          "fallback_state = 'answer', fallback_next_at = @now where id = @id and fallback_message_id is null",
      ),
      recordEvent: s.prepare(
        'insert into lead_events (lead_id, repeat_id, kind, at, detail) values (@leadId, @repeatId, @kind, @at, @detail)',
      ),
    };
    const st = this.statements;
    this.queries = {
      findRequest: (id) => {
        const row = st.findRequest.get(id, id) as { lead_id: number; repeat: number; row_id: number; has_fallback: number } | undefined;
        return row ? { leadId: row.lead_id, repeat: row.repeat === 1, rowId: row.row_id, hasFallback: row.has_fallback === 1 } : undefined;
      },
      nthAccepted: (keyHash, since, limit) => {
        const row = (keyHash === null ? st.hourlyNth.get(since, limit - 1) : st.visitorNth.get(keyHash, since, limit - 1)) as
          { at: number } | undefined;
        return row ? row.at : null;
      },
      recordAccepted: (keyHash, at) => void st.record.run(keyHash, at),
      findRepeatTarget: (key, phone, since, until) => st.repeatTarget.get(key, phone, since, until) as Lead | undefined,
      insertLead: (lead) =>
        Number(
          st.insertLead.run({ date: null, guests: null, comment: null, ...NO_LATE, received_at: lead.created_at, ...lead }).lastInsertRowid,
        ),
      insertRepeat: (repeat) =>
        Number(st.insertRepeat.run({ ip_hash: null, ...NO_LATE, received_at: repeat.created_at, ...repeat }).lastInsertRowid),
      reportFallback: (known, f) => {
        const params = { id: known.rowId, chat_id: f.chatId, message_id: f.messageId, sent_at: f.sentAt, now: f.now };
        return (known.repeat ? st.reportRepeatFallback : st.reportLeadFallback).run(params).changes === 1;
      },
      recordEvent: (event) => void st.recordEvent.run(event),
    };
  }

  /**
   * Runs `decide` in one BEGIN IMMEDIATE transaction, after any Kysely work on the connection has finished.
   * Refuses (DatabaseGoneError) when the file at DATABASE_PATH is no longer the one opened: the commit would land
   * in a deleted or replaced file and the acknowledged lead would be lost at the next start. While another
   * connection holds the lock the whole transaction is tried again, asynchronously, within DATABASE_BUSY_TIMEOUT_MS
   * (the connection is released between tries, so the event loop and other queries go on).
   */
  run<T>(decide: (q: SubmitQueries) => T): Promise<T> {
    const { db, sqlite } = this.database;
    return this.database.whileBusy(() =>
      db.connection().execute(() => {
        this.database.assertFileCurrent();
        // A promise for Kysely's connection API; the work itself is synchronous, inside the mutex.
        return Promise.resolve(sqlite.transaction(() => decide(this.queries)).immediate());
      }),
    );
  }
}
