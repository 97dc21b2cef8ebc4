import { Injectable } from '@nestjs/common';
import type { Statement } from 'better-sqlite3';
import { DatabaseHandle } from '../database/database.module';
import type { Lead, NewLead, NewLeadRepeat } from '../database/schema';

export interface KnownRequest {
  leadId: number;
  repeat: boolean;
}

/** The queries of the submit decision, synchronous, inside one BEGIN IMMEDIATE. */
export interface SubmitQueries {
  findRequest(requestId: string): KnownRequest | undefined;
  /** The `limit`-th newest accepted submission inside the window (of one visitor, or of all), if any. */
  nthAccepted(keyHash: string | null, since: number, limit: number): number | null;
  recordAccepted(keyHash: string, at: number): void;
  findRepeatTarget(telegramKey: string, phone: string, since: number): Lead | undefined;
  insertLead(lead: NewLead): number;
  insertRepeat(repeat: NewLeadRepeat): number;
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
        'select id as lead_id, 0 as repeat from leads where request_id = ? union all select lead_id, 1 from lead_repeats where request_id = ? limit 1',
      ),
      visitorNth: s.prepare(
        "select at from rate_events where kind = 'accepted' and key_hash = ? and at > ? order by at desc limit 1 offset ?",
      ),
      hourlyNth: s.prepare("select at from rate_events where kind = 'accepted' and at > ? order by at desc limit 1 offset ?"),
      record: s.prepare("insert into rate_events (kind, key_hash, at) values ('accepted', ?, ?)"),
      repeatTarget: s.prepare(
        "select * from leads where (telegram_key = ? or phone = ?) and created_at > ? and status != 'spam' and anonymised_at is null order by created_at desc, id desc limit 1",
      ),
      insertLead: s.prepare(
        'insert into leads (request_id, name, telegram, telegram_key, phone, date, guests, comment, ip_hash, created_at, next_attempt_at) values (@request_id, @name, @telegram, @telegram_key, @phone, @date, @guests, @comment, @ip_hash, @created_at, @next_attempt_at)',
      ),
      insertRepeat: s.prepare(
        'insert into lead_repeats (lead_id, request_id, created_at, changes, ip_hash, next_attempt_at) values (@lead_id, @request_id, @created_at, @changes, @ip_hash, @next_attempt_at)',
      ),
    };
    const st = this.statements;
    this.queries = {
      findRequest: (id) => {
        const row = st.findRequest.get(id, id) as { lead_id: number; repeat: number } | undefined;
        return row ? { leadId: row.lead_id, repeat: row.repeat === 1 } : undefined;
      },
      nthAccepted: (keyHash, since, limit) => {
        const row = (keyHash === null ? st.hourlyNth.get(since, limit - 1) : st.visitorNth.get(keyHash, since, limit - 1)) as
          { at: number } | undefined;
        return row ? row.at : null;
      },
      recordAccepted: (keyHash, at) => void st.record.run(keyHash, at),
      findRepeatTarget: (key, phone, since) => st.repeatTarget.get(key, phone, since) as Lead | undefined,
      insertLead: (lead) => Number(st.insertLead.run({ date: null, guests: null, comment: null, ...lead }).lastInsertRowid),
      insertRepeat: (repeat) => Number(st.insertRepeat.run({ ip_hash: null, ...repeat }).lastInsertRowid),
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
