import type BetterSqlite3 from 'better-sqlite3';
import { type Compilable, sql } from 'kysely';
import { DatabaseGoneError } from '../database/database.module';
import { cachedPrepare, whileBusy } from '../database/immediate-sqlite-dialect';
import type { NewLead, RateEventKind } from '../database/schema';
import type { FallbackState, Lead } from '../domain/lead';
import { decideSubmit } from '../leads/submit-decision';
import { LeadErasureRepository } from './lead-erasure.repository';
import { type SubmitPlan, type SubmitQueries, type SubmitVerdict, SubmitRunner, type Waiting } from './submit-runner';

const MINUTE_MS = 60_000;

/** The reads of the hourly limit: per-minute counts newest first, and the submissions with `after < at < before`. */
interface MinuteReads {
  acceptedMinutes(kind: RateEventKind, from: number): { minute: number; n: number }[];
  acceptedBetween(kind: RateEventKind, after: number, before: number): number;
  nthAcceptedBetween(kind: RateEventKind, after: number, before: number, offset: number): number | null;
}

/**
 * The time of the `limit`-th newest accepted submission after `since` (null: fewer): per-minute counts newest first
 * until the limit falls into a minute, then the exact one inside it (as PostgreSQL's `leads_nth_accepted`).
 */
export function nthByMinutes(q: MinuteReads, kind: RateEventKind, since: number, limit: number): number | null {
  const first = Math.floor(since / MINUTE_MS);
  let newer = 0;
  for (const { minute, n: counted } of q.acceptedMinutes(kind, first)) {
    const end = (minute + 1) * MINUTE_MS;
    const n = minute === first ? q.acceptedBetween(kind, since, end) : counted;
    if (newer + n >= limit) return q.nthAcceptedBetween(kind, Math.max(since, minute * MINUTE_MS - 1), end, limit - newer - 1);
    newer += n;
  }
  return null;
}

type Outcome = { ok: true; verdict: SubmitVerdict } | { ok: false; error: unknown };

/** A new lead's `updated_at`: the latest of its times (the migrations' `leads.updated_at` triggers take the same). */
const latestTimeOf = (lead: NewLead) =>
  Math.max(lead.created_at, lead.received_at ?? 0, lead.status_changed_at ?? 0, lead.published_at ?? 0, lead.anonymised_at ?? 0);

/**
 * The decisions over prepared statements in one synchronous `BEGIN IMMEDIATE … COMMIT` (one fsync). Each decision is a
 * savepoint: one that throws is rolled back and rejected alone; a failed commit rejects the whole batch.
 */
export class SqliteSubmitRunner extends SubmitRunner {
  private inBatch: BetterSqlite3.Transaction<(batch: Waiting[]) => Outcome[]> | null = null;
  /** Group commits so far and the decisions they held (tests and the bench read them). */
  readonly stats = { commits: 0, decisions: 0 };

  /** Through Kysely's connection mutex (inside a Kysely transaction it would be a savepoint); refused when the file is gone. */
  protected async decideBatch(batch: Waiting[]): Promise<void> {
    const inBatch = (this.inBatch ??= this.prepare());
    const outcomes = await whileBusy(
      () =>
        this.database.db.connection().execute(() => {
          if (!this.database.fileIsCurrent()) throw new DatabaseGoneError(this.database.path);
          const done = inBatch.immediate(batch);
          this.stats.commits += 1;
          this.stats.decisions += batch.length;
          return Promise.resolve(done);
        }),
      this.database.busy,
    );
    outcomes.forEach((outcome, i) => (outcome.ok ? batch[i].resolve(outcome.verdict) : batch[i].reject(outcome.error)));
  }

  private prepare(): BetterSqlite3.Transaction<(batch: Waiting[]) => Outcome[]> {
    const s = this.database.sqlite;
    // The rows' writes name the columns the plan gives (as `leads_submit`): Kysely writes them, each shape prepared once.
    const prepare = cachedPrepare(s);
    const run = (query: Compilable) => {
      const { sql, parameters } = query.compile();
      return prepare(sql).run(parameters);
    };
    const { db } = this.database;
    // A new row's insert, compiled by Kysely once per table and set of columns (a handful: in time or late, with a
    // source or without), not for every lead (about 30 µs of its CPU, docs/performance.md).
    const inserts = new Map<string, { sql: string; columns: string[] }>();
    const insertRow = (table: string, values: object, query: () => Compilable): number => {
      const row = values as Record<string, unknown>;
      const columns = Object.keys(row).filter((c) => row[c] !== undefined);
      const key = `${table}(${columns.join()})`;
      let shape = inserts.get(key);
      if (!shape) {
        const { sql, parameters } = query().compile();
        if (parameters.length !== columns.length) throw new Error(`the insert into ${table} is not one parameter a column`);
        inserts.set(key, (shape = { sql, columns }));
      }
      return Number(prepare(shape.sql).run(shape.columns.map((c) => row[c])).lastInsertRowid);
    };
    const st = {
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
      recordEvent: s.prepare(
        'insert into lead_events (lead_id, repeat_id, kind, at, detail) values (@leadId, @repeatId, @kind, @at, @detail)',
      ),
    };
    const minutes: MinuteReads = {
      acceptedMinutes: (kind, from) => st.minutes.all(kind, from) as { minute: number; n: number }[],
      acceptedBetween: (kind, after, before) => (st.countBetween.get(kind, after, before) as { n: number }).n,
      nthAcceptedBetween: (kind, after, before, offset) =>
        (st.nthBetween.get(kind, after, before, offset) as { at: number } | undefined)?.at ?? null,
    };
    const queries: SubmitQueries = {
      findRequest: (id) => {
        const row = st.findRequest.get(id, id) as { lead_id: number; repeat: number; row_id: number; has_fallback: number } | undefined;
        return row ? { leadId: row.lead_id, repeat: row.repeat === 1, rowId: row.row_id, hasFallback: row.has_fallback === 1 } : undefined;
      },
      nthAccepted: (kind, keyHash, since, limit) =>
        keyHash === null
          ? nthByMinutes(minutes, kind, since, limit)
          : ((st.visitorNth.get(kind, keyHash, since, limit - 1) as { at: number } | undefined)?.at ?? null),
      recordAccepted: (kind, keyHash, at) => {
        st.record.run(kind, keyHash, at);
        st.bumpMinute.run(kind, Math.floor(at / MINUTE_MS));
      },
      erasedSince: LeadErasureRepository.sqliteErasedSince(s),
      findRepeatTarget: (key, phone, since, until) => st.repeatTarget.get(key, phone, since, until) as Lead | undefined,
      insertLead: (lead) => {
        // With `updated_at` as the insert trigger would take it, so that the trigger does not rewrite the new row.
        const row = { ...lead, updated_at: latestTimeOf(lead) };
        return insertRow('leads', row, () => db.insertInto('leads').values(row));
      },
      insertRepeat: (repeat) => insertRow('lead_repeats', repeat, () => db.insertInto('lead_repeats').values(repeat)),
      // `pending` for a lead without a card (its card may adopt the message), else `answer`.
      reportFallback: (known, fallback) => {
        const state = known.repeat
          ? sql<FallbackState>`'answer'`
          : sql<FallbackState>`case when published_at is null then 'pending' else 'answer' end`;
        const update = db
          .updateTable(known.repeat ? 'lead_repeats' : 'leads')
          .set({ ...fallback, fallback_state: state })
          .where('id', '=', known.rowId)
          .where('fallback_message_id', 'is', null);
        return run(update).changes === 1;
      },
      recordEvent: (event) => void st.recordEvent.run(event),
    };
    const alone = s.transaction((plan: SubmitPlan): SubmitVerdict => decideSubmit(queries, plan));
    return s.transaction((batch: Waiting[]): Outcome[] =>
      batch.map((w) => {
        try {
          return { ok: true, verdict: alone(w.plan) };
        } catch (error) {
          // Some errors (SQLITE_FULL, SQLITE_IOERR…) make SQLite roll the whole transaction back: then nothing of the
          // batch will be stored, and the next decisions must not run outside it. The batch fails with this error.
          if (!s.inTransaction) throw error;
          return { ok: false, error };
        }
      }),
    );
  }
}
