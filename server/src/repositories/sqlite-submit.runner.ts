import type BetterSqlite3 from 'better-sqlite3';
import type { Statement } from 'better-sqlite3';
import type { DatabaseHandle } from '../database/database.module';
import type { Lead } from '../domain/lead';
import { ErasedContactsRepository } from './erased-contacts.repository';
import {
  type Decision,
  MINUTE_MS,
  runSync,
  SUBMIT_STEPS,
  type SubmitPlan,
  type SubmitQueries,
  type SubmitSteps,
  type SubmitVerdict,
  SubmitRunner,
} from './submit-runner';

/**
 * The insert of a row into `leads` or `lead_repeats`, by the columns the row names (the others take their defaults),
 * as PostgreSQL's `leads_insert_row` does from the same plan: a column added to the lead needs no change here. One
 * prepared statement per table and set of columns (a handful: in time or late, with a source or without), cached.
 */
class RowInserts {
  private readonly statements = new Map<string, Statement>();

  constructor(private readonly sqlite: BetterSqlite3.Database) {}

  insert(table: 'leads' | 'lead_repeats', row: object): number {
    const values = Object.fromEntries(Object.entries(row).filter(([, v]) => v !== undefined));
    const columns = Object.keys(values);
    const key = `${table}(${columns.join(',')})`;
    let statement = this.statements.get(key);
    if (!statement) {
      for (const c of columns) if (!/^[a-z_]+$/.test(c)) throw new Error(`not a column name: ${c}`);
      statement = this.sqlite.prepare(`insert into ${table} (${columns.join(', ')}) values (${columns.map((c) => `@${c}`).join(', ')})`);
      this.statements.set(key, statement);
    }
    return Number(statement.run(values).lastInsertRowid);
  }
}

/** At most this many decisions share one SQLite commit: bounds the time the write lock is held. */
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
export class SqliteSubmitRunner extends SubmitRunner {
  private prepared: SubmitQueries | null = null;
  private transactions: { inBatch: BetterSqlite3.Transaction<(batch: Waiting[]) => Outcome[]> } | null = null;
  /** Decisions waiting for the next group commit. */
  private readonly waiting: Waiting[] = [];
  private flushScheduled = false;
  private flushing = false;
  /** Group commits so far and the decisions they held (tests and the bench read them). */
  readonly stats = { commits: 0, decisions: 0 };

  constructor(private readonly database: DatabaseHandle) {
    super();
  }

  /** The queries as prepared statements, prepared once on first use. */
  private sqliteQueries(): SubmitQueries {
    if (this.prepared) return this.prepared;
    const s = this.database.sqlite;
    const rows = new RowInserts(s);
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
      insertLead: (lead) => rows.insert('leads', lead),
      insertRepeat: (repeat) => rows.insert('lead_repeats', repeat),
      reportFallback: (known, f) => {
        const params = { id: known.rowId, chat_id: f.chatId, message_id: f.messageId, sent_at: f.sentAt, now: f.now };
        return (known.repeat ? st.reportRepeatFallback : st.reportLeadFallback).run(params).changes === 1;
      },
      recordEvent: (event) => void st.recordEvent.run(event),
      erasedSince: ErasedContactsRepository.sqliteErasedSince(s),
    };
    return this.prepared;
  }

  /** Runs the decision `decide` in the next group commit; the plan is PostgreSQL's input, unused here. */
  submit(_plan: SubmitPlan, decide: (q: SubmitSteps) => Decision<SubmitVerdict>): Promise<SubmitVerdict> {
    return this.runSqlite(decide);
  }

  /**
   * SQLite, with group commit: decisions asked for in the same turn of the event loop wait for that turn's
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
