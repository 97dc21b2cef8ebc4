import { Injectable } from '@nestjs/common';
import type BetterSqlite3 from 'better-sqlite3';
import type { Statement } from 'better-sqlite3';
import { sql } from 'kysely';
import { DatabaseHandle } from '../database/database.module';
import { ErasedContactsRepository } from './erased-contacts.repository';
import type { LeadEventKind, NewLead, NewLeadRepeat, RateEventKind } from '../database/schema';
import type { Lead } from '../domain/lead';
import type { LeadFields } from '@stickers/shared';

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

/**
 * Everything a submit decision needs, worked out before the lock (LeadsService): SQLite's TypeScript decision and
 * PostgreSQL's function `leads_submit` (migration 0011) both decide from it, in the same order of checks. Snake case:
 * it is sent to PostgreSQL as it is, as JSON.
 */
export interface SubmitPlan {
  request_id: string;
  now: number;
  /** The lead's time: now, or a late request's time on the landing (never after now). */
  created_at: number;
  ip_hash: string;
  /**
   * Which count the request is checked against and recorded in, at its arrival: `accepted` for a request that came in
   * time (LEADS_IP_LIMIT per visitor, LEADS_HOURLY_LIMIT), `late` for one replayed from a landing's spool (the same
   * per-visitor limit among replays, and LEADS_LATE_HOURLY_LIMIT of its own), so that replays after an outage neither
   * use up the visitors' hour nor pass unbounded.
   */
  count: RateEventKind;
  limits: { visitor_since: number; visitor_limit: number; hourly_since: number; hourly_limit: number };
  /** Which stored lead this request repeats: the newest with this username or phone created in (since, until]. */
  match: { telegram_key: string; phone: string; since: number; until: number };
  /** The visitor's fields as sent, for the repeat's changed fields. */
  incoming: LeadFields;
  /** The row of a new lead, whole. */
  lead: NewLead;
  /** The row of a repeat, but for the lead it repeats and its changes. */
  repeat: Omit<NewLeadRepeat, 'lead_id' | 'changes'>;
  /** A fallback message a replay reports, recorded for a request stored before that has none. */
  fallback: { chat_id: string; message_id: number; sent_at: number } | null;
  /** A late request's story up to "… later" (`lateStoryPrefix`); its events end it with " as <what>". */
  late_story: string | null;
  /**
   * A late request only: the keyed hashes of its contacts (ContactHasher) and the lead's row without its personal data.
   * When one of the contacts was erased at or after the request was submitted on the landing, the replay is stored as
   * that row (the person asked to be forgotten after sending it), never as the person.
   */
  erased: { hashes: string[]; lead: NewLead } | null;
}

/** What a submit decision came to, as both databases answer it. */
export type SubmitVerdict =
  | { kind: 'duplicate'; lead_number: number; repeat: boolean; fallback_noted: boolean }
  /** `nth`: the time of the limit-th newest accepted submission in the window (when the window frees a place). */
  | { kind: 'limited'; why: 'visitor' | 'hourly'; nth: number }
  | { kind: 'repeat'; lead_number: number }
  | { kind: 'created'; lead_number: number };

/** The queries of the submit decision, inside one transaction that no other decision runs beside. */
export interface SubmitQueries {
  findRequest(requestId: string): KnownRequest | undefined;
  /** The time of the `limit`-th newest accepted submission (of the count `kind`) of one visitor after `since`, if any. */
  nthOfVisitor(kind: RateEventKind, keyHash: string, since: number, limit: number): number | null;
  /** The minutes of accepted submissions from `from` on (minute numbers), newest first, with their counts. */
  acceptedMinutes(kind: RateEventKind, from: number): { minute: number; n: number }[];
  /** Accepted submissions with `after < at < before`. */
  acceptedBetween(kind: RateEventKind, after: number, before: number): number;
  /** The time of the (offset + 1)-th newest accepted submission with `after < at < before`. */
  nthAcceptedBetween(kind: RateEventKind, after: number, before: number, offset: number): number | null;
  recordAccepted(kind: RateEventKind, keyHash: string, at: number): void;
  /** The newest lead of this username or phone created in (since, until]. */
  findRepeatTarget(telegramKey: string, phone: string, since: number, until: number): Lead | undefined;
  insertLead(lead: NewLead): number;
  insertRepeat(repeat: NewLeadRepeat): number;
  /**
   * Records a fallback message for a stored request that has none: a lead without a card yet may still adopt it,
   * else (and for a repeat) it gets its reply. False when one was recorded meanwhile.
   */
  reportFallback(known: KnownRequest, fallback: ReportedFallback): boolean;
  /** Whether any of these contact hashes was erased at or after `submittedAt` (erased_contacts). */
  erasedSince(hashes: readonly string[], submittedAt: number): boolean;
  /** An event of the lead's story, committed with the decision. */
  recordEvent(event: { leadId: number; repeatId: number | null; kind: LeadEventKind; at: number; detail: string }): void;
}

/** One query of a decision, as the decision asks for it: the runner of the database underneath answers it. */
export type SubmitCall = { [K in keyof SubmitQueries]: { name: K; args: Parameters<SubmitQueries[K]> } }[keyof SubmitQueries];

/**
 * SQLite's submit decision: a generator that yields each query (`yield* q.findRequest(id)`) and gets its answer back;
 * the runner answers synchronously inside one BEGIN IMMEDIATE (no promise, no other work in between). PostgreSQL runs
 * the same decision as its function `leads_submit` instead, in one round trip.
 */
export type Decision<T> = Generator<SubmitCall, T, unknown>;

/** What a decision calls: each query as a step to `yield*`, typed as the query; and the limits' reads built on them. */
export type SubmitSteps = {
  [K in keyof SubmitQueries]: (...args: Parameters<SubmitQueries[K]>) => Generator<SubmitCall, ReturnType<SubmitQueries[K]>, unknown>;
} & {
  /** The `limit`-th newest accepted submission after `since`, of one visitor (its hash) or of all (null), if any. */
  nthAccepted(kind: RateEventKind, keyHash: string | null, since: number, limit: number): Generator<SubmitCall, number | null, unknown>;
};

const QUERY_NAMES: (keyof SubmitQueries)[] = [
  'findRequest',
  'nthOfVisitor',
  'acceptedMinutes',
  'acceptedBetween',
  'nthAcceptedBetween',
  'recordAccepted',
  'findRepeatTarget',
  'insertLead',
  'insertRepeat',
  'reportFallback',
  'erasedSince',
  'recordEvent',
];

export const SUBMIT_STEPS: SubmitSteps = {
  ...(Object.fromEntries(
    QUERY_NAMES.map((name) => [
      name,
      function* (...args: unknown[]): Generator<SubmitCall, unknown, unknown> {
        return yield { name, args } as SubmitCall;
      },
    ]),
  ) as unknown as Omit<SubmitSteps, 'nthAccepted'>),
  nthAccepted: (kind, keyHash, since, limit) =>
    keyHash === null ? nthByMinutes(SUBMIT_STEPS, kind, since, limit) : SUBMIT_STEPS.nthOfVisitor(kind, keyHash, since, limit),
};

/** Answers one yielded call with `queries`. */
function answer(queries: Partial<SubmitQueries>, call: SubmitCall): unknown {
  return (queries[call.name] as (...args: unknown[]) => unknown)(...call.args);
}

/** Runs a decision against synchronous queries (SQLite, inside its transaction; the tests' in-memory queries). */
export function runSync<T>(decision: Decision<T>, queries: Partial<SubmitQueries>): T {
  let step = decision.next();
  while (!step.done) step = decision.next(answer(queries, step.value));
  return step.value;
}

/**
 * The key of the PostgreSQL advisory lock every submit decision takes first (`pg_advisory_xact_lock`): decisions run
 * one at a time across every instance, as they do on SQLite under BEGIN IMMEDIATE. The hourly limit counts every
 * visitor's leads, so any two decisions depend on each other and a narrower lock would not be exact
 * (docs/decisions.md, issue 13). An arbitrary constant that no other lock of this app uses.
 */
export const SUBMIT_LOCK_KEY = 7_291_000_113;

const MINUTE_MS = 60_000;

/**
 * The time of the `limit`-th newest accepted submission after `since` (null: fewer), read from the per-minute counts
 * (issue 15): newest minute first, adding counts until the limit falls into one minute, then the exact submission
 * inside that minute. The minute the window starts in is counted exactly (only its submissions after `since`). At
 * most 61 count rows and two reads of one minute's submissions, however high the limit: the query that read up to
 * `limit` rows is gone. The same answer as that query gave. Steps of the decision like any query, so both databases'
 * runners answer it.
 */
export function* nthByMinutes(
  q: Pick<SubmitSteps, 'acceptedMinutes' | 'acceptedBetween' | 'nthAcceptedBetween'>,
  kind: RateEventKind,
  since: number,
  limit: number,
): Generator<SubmitCall, number | null, unknown> {
  const first = Math.floor(since / MINUTE_MS);
  let newer = 0;
  for (const { minute, n: counted } of yield* q.acceptedMinutes(kind, first)) {
    const end = (minute + 1) * MINUTE_MS;
    const n = minute === first ? yield* q.acceptedBetween(kind, since, end) : counted;
    if (newer + n >= limit) return yield* q.nthAcceptedBetween(kind, Math.max(since, minute * MINUTE_MS - 1), end, limit - newer - 1);
    newer += n;
  }
  return null;
}

/** At most this many decisions share one SQLite commit (issue 15): bounds the time the write lock is held. */
export const MAX_BATCH = 64;

interface Waiting {
  decide: (q: SubmitSteps) => Decision<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

/**
 * The hot path of `POST /leads` as prepared better-sqlite3 statements in one synchronous `BEGIN IMMEDIATE`
 * (docs/requirements.md §1.1, steps 6–10). `npm run bench` showed the async query path costing more than the SQL
 * itself (docs/performance.md). The transaction is entered through Kysely's connection mutex, so it never runs inside
 * an open Kysely transaction (where better-sqlite3 would silently turn it into a savepoint, docs/performance.md).
 */
@Injectable()
export class LeadSubmitRepository {
  private prepared: SubmitQueries | null = null;
  private transactions: { inBatch: BetterSqlite3.Transaction<(batch: Waiting[]) => Outcome[]> } | null = null;
  /** Decisions waiting for the next group commit (SQLite). */
  private readonly waiting: Waiting[] = [];
  private flushScheduled = false;
  private flushing = false;
  /** Group commits so far and the decisions they held (tests and the bench read them). */
  readonly stats = { commits: 0, decisions: 0 };

  constructor(private readonly database: DatabaseHandle) {}

  /** The queries as prepared statements, prepared once on first use (SQLite only). */
  private sqliteQueries(): SubmitQueries {
    if (this.prepared) return this.prepared;
    const s = this.database.sqlite;
    const st: Record<string, Statement> = {
      findRequest: s.prepare(
        'select id as lead_id, 0 as repeat, id as row_id, fallback_message_id is not null as has_fallback from leads where request_id = ? ' +
          'union all select lead_id, 1, id, fallback_message_id is not null from lead_repeats where request_id = ? limit 1',
      ),
      visitorNth: s.prepare('select at from rate_events where kind = ? and key_hash = ? and at > ? order by at desc limit 1 offset ?'),
      minutes: s.prepare('select minute, n from rate_minutes where kind = ? and minute >= ? order by minute desc'),
      countBetween: s.prepare('select count(*) as n from rate_events where kind = ? and at > ? and at < ?'),
      nthBetween: s.prepare('select at from rate_events where kind = ? and at > ? and at < ? order by at desc limit 1 offset ?'),
      record: s.prepare('insert into rate_events (kind, key_hash, at) values (?, ?, ?)'),
      bumpMinute: s.prepare(
        'insert into rate_minutes (kind, minute, n) values (?, ?, 1) on conflict (kind, minute) do update set n = n + 1',
      ),
      repeatTarget: s.prepare(
        'select * from leads where (telegram_key = ? or phone = ?) and created_at > ? and created_at <= ? ' +
          "and status != 'spam' and anonymised_at is null order by created_at desc, id desc limit 1",
      ),
      insertLead: s.prepare(
        `insert into leads (request_id, name, telegram, telegram_key, phone, date, guests, comment, ip_hash, created_at, next_attempt_at, anonymised_at, ${LATE_COLUMNS}) ` +
          `values (@request_id, @name, @telegram, @telegram_key, @phone, @date, @guests, @comment, @ip_hash, @created_at, @next_attempt_at, @anonymised_at, ${LATE_VALUES})`,
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
    this.prepared = {
      findRequest: (id) => {
        const row = st.findRequest.get(id, id) as { lead_id: number; repeat: number; row_id: number; has_fallback: number } | undefined;
        return row ? { leadId: row.lead_id, repeat: row.repeat === 1, rowId: row.row_id, hasFallback: row.has_fallback === 1 } : undefined;
      },
      nthOfVisitor: (kind, keyHash, since, limit) =>
        (st.visitorNth.get(kind, keyHash, since, limit - 1) as { at: number } | undefined)?.at ?? null,
      acceptedMinutes: (kind, from) => st.minutes.all(kind, from) as { minute: number; n: number }[],
      acceptedBetween: (kind, after, before) => (st.countBetween.get(kind, after, before) as { n: number }).n,
      nthAcceptedBetween: (kind, after, before, offset) =>
        (st.nthBetween.get(kind, after, before, offset) as { at: number } | undefined)?.at ?? null,
      recordAccepted: (kind, keyHash, at) => {
        st.record.run(kind, keyHash, at);
        st.bumpMinute.run(kind, Math.floor(at / MINUTE_MS));
      },
      findRepeatTarget: (key, phone, since, until) => st.repeatTarget.get(key, phone, since, until) as Lead | undefined,
      insertLead: (lead) =>
        Number(
          st.insertLead.run({
            date: null,
            guests: null,
            comment: null,
            anonymised_at: null,
            ...NO_LATE,
            received_at: lead.created_at,
            ...lead,
          }).lastInsertRowid,
        ),
      insertRepeat: (repeat) =>
        Number(st.insertRepeat.run({ ip_hash: null, ...NO_LATE, received_at: repeat.created_at, ...repeat }).lastInsertRowid),
      reportFallback: (known, f) => {
        const params = { id: known.rowId, chat_id: f.chatId, message_id: f.messageId, sent_at: f.sentAt, now: f.now };
        return (known.repeat ? st.reportRepeatFallback : st.reportLeadFallback).run(params).changes === 1;
      },
      recordEvent: (event) => void st.recordEvent.run(event),
      erasedSince: ErasedContactsRepository.sqliteErasedSince(s),
    };
    return this.prepared;
  }

  /**
   * Runs the submit decision alone: on SQLite the TypeScript decision `decide` inside one BEGIN IMMEDIATE (group
   * commit); on PostgreSQL the same decision as the server-side function `leads_submit` (migration 0011), called once
   * with the plan — one statement, one round trip, holding the submit lock only while it runs.
   */
  submit(plan: SubmitPlan, decide: (q: SubmitSteps) => Decision<SubmitVerdict>): Promise<SubmitVerdict> {
    return this.database.kind === 'postgres' ? this.runPostgres(plan) : this.runSqlite(decide);
  }

  /**
   * PostgreSQL: one statement outside BEGIN is a transaction of its own, so the advisory lock the function takes first
   * (waiting at most DATABASE_BUSY_TIMEOUT_MS, the sessions' `lock_timeout`, then 55P03, a storage error: 503), and
   * every lock after it, is released with its answer, whatever
   * happens — no BEGIN or COMMIT to send, and no round trip while it is held (docs/performance.md, PostgreSQL). Each
   * later statement of the function sees every decision committed before the lock was granted (READ COMMITTED).
   */
  private async runPostgres(plan: SubmitPlan): Promise<SubmitVerdict> {
    const call = { ...plan, lock_key: SUBMIT_LOCK_KEY };
    const { rows } = await sql<{ verdict: SubmitVerdict }>`select leads_submit(${JSON.stringify(call)}::jsonb) as verdict`.execute(
      this.database.db,
    );
    return rows[0].verdict;
  }

  /**
   * SQLite, with group commit (issue 15): decisions asked for in the same turn of the event loop wait for that turn's
   * end (`setImmediate`), then run one after another, each exactly as alone, inside ONE `BEGIN IMMEDIATE … COMMIT`, so
   * they share one fsync (`synchronous=FULL`). Each decision is a savepoint: one that throws (a constraint, a bug) is
   * rolled back alone and rejected, the others commit. No decision is answered before the commit that holds it has
   * returned; a failed commit (disk full, the file gone, a lock held past DATABASE_BUSY_TIMEOUT_MS) rejects the whole
   * batch, and nothing of it was stored. At most MAX_BATCH decisions per commit; more wait for the next one.
   */
  private runSqlite<T>(decide: (q: SubmitSteps) => Decision<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.waiting.push({ decide, resolve: resolve as (value: unknown) => void, reject });
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => void this.flush());
      }
    });
  }

  /** Commits every waiting decision, MAX_BATCH at a time, one batch after another (never two at once). */
  private async flush(): Promise<void> {
    if (this.flushing) return;
    this.flushing = true;
    try {
      while (this.waiting.length > 0) {
        const batch = this.waiting.splice(0, MAX_BATCH);
        let outcomes: Outcome[];
        try {
          outcomes = await this.commitBatch(batch);
        } catch (err) {
          for (const w of batch) w.reject(err);
          continue;
        }
        batch.forEach((w, i) => (outcomes[i].ok ? w.resolve(outcomes[i].value) : w.reject(outcomes[i].error)));
      }
    } finally {
      this.flushing = false;
      this.flushScheduled = false;
    }
  }

  /**
   * One BEGIN IMMEDIATE for the batch, entered through Kysely's connection mutex (never inside an open Kysely
   * transaction, where better-sqlite3 would make it a savepoint); tried again as a whole while another connection
   * holds the lock, within DATABASE_BUSY_TIMEOUT_MS. Refuses (DatabaseGoneError) when the file at DATABASE_PATH is no
   * longer the one opened: the commit would land in a deleted or replaced file.
   */
  private commitBatch(batch: Waiting[]): Promise<Outcome[]> {
    const { db } = this.database;
    const { inBatch } = this.sqliteTransactions();
    return this.database.whileBusy(() =>
      db.connection().execute(() => {
        this.database.assertFileCurrent();
        const outcomes = inBatch.immediate(batch);
        this.stats.commits += 1;
        this.stats.decisions += batch.length;
        // A promise for Kysely's connection API; the work itself is synchronous, inside the mutex.
        return Promise.resolve(outcomes);
      }),
    );
  }

  /** The batch's transaction and each decision's savepoint (better-sqlite3 nests a transaction as a savepoint). */
  private sqliteTransactions(): { inBatch: BetterSqlite3.Transaction<(batch: Waiting[]) => Outcome[]> } {
    if (this.transactions) return this.transactions;
    const { sqlite } = this.database;
    const queries = this.sqliteQueries();
    const alone = sqlite.transaction((decide: Waiting['decide']): unknown => runSync(decide(SUBMIT_STEPS), queries));
    const inBatch = sqlite.transaction((batch: Waiting[]): Outcome[] =>
      batch.map((w) => {
        try {
          return { ok: true, value: alone(w.decide) };
        } catch (error) {
          // Some errors (SQLITE_FULL, SQLITE_IOERR…) make SQLite roll the whole transaction back: then nothing of the
          // batch will be stored, and the next decisions must not run outside it. The batch fails with this error.
          if (!sqlite.inTransaction) throw error;
          return { ok: false, error };
        }
      }),
    );
    this.transactions = { inBatch };
    return this.transactions;
  }
}
