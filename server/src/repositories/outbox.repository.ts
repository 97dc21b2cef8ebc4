import { Injectable } from '@nestjs/common';
import type { Selectable, Updateable } from 'kysely';
import { InjectDb } from '../database/database.module';
import type { LeadsDb } from '../database/database';
import { dialectOf } from '../database/dialect-sql';
import type { Database, OutboxKind } from '../database/schema';
import { countRows, type Tx } from './transactor';

export type OutboxRow = Selectable<Database['outbox']>;

/** The Telegram rows' target (the webhook rows' is their endpoint's URL). */
export const TELEGRAM_TARGET = 'telegram';

export interface OutboxFailure {
  attempts: number;
  nextAt: number;
  error: string;
  firstFailedAt?: number;
}

const UNCLAIMED = { claimed_by: null, claimed_until: null };

/** The outbox: the runner's claims and outcomes; the Telegram rows come from triggers, the webhook rows from here. */
@Injectable()
export class OutboxRepository {
  /** Several instances may share the database (PostgreSQL): claims are written. */
  private readonly shared: boolean;

  constructor(@InjectDb() private readonly db: LeadsDb) {
    this.shared = dialectOf(db) === 'postgres';
  }

  /**
   * Claims up to `limit` due rows of `target` and `kind` for `holder` until `until` (wall clock), lowest id first, none
   * behind an earlier row of its lead and target. SQLite's one runner keeps claims in memory.
   */
  async claim(p: {
    now: number;
    wallNow: number;
    until: number;
    holder: string;
    target: string;
    limit: number;
    kind: OutboxKind;
    leadId?: number;
    /** Due or not (a button press rewrites its card now, whatever the row's next time). */
    anyTime?: boolean;
  }): Promise<OutboxRow[]> {
    let candidates = this.db
      .selectFrom('outbox as o')
      .select('o.id')
      .where('o.done_at', 'is', null)
      .where('o.next_at', '<=', p.anyTime ? Number.MAX_SAFE_INTEGER : p.now)
      .where('o.target', '=', p.target)
      .where('o.kind', '=', p.kind)
      .where((eb) => eb.or([eb('o.claimed_until', 'is', null), eb('o.claimed_until', '<', p.wallNow), eb('o.claimed_by', '=', p.holder)]))
      .where((eb) =>
        eb.not(
          eb.exists(
            eb
              .selectFrom('outbox as p')
              .select('p.id')
              .whereRef('p.lead_id', '=', 'o.lead_id')
              .whereRef('p.target', '=', 'o.target')
              .where('p.done_at', 'is', null)
              .whereRef('p.id', '<', 'o.id'),
          ),
        ),
      )
      .orderBy('o.id')
      .limit(p.limit);
    if (p.leadId !== undefined) candidates = candidates.where('o.lead_id', '=', p.leadId);
    if (!this.shared) return candidates.clearSelect().selectAll('o').execute();
    candidates = candidates.forUpdate().skipLocked();
    const rows = await this.db
      .updateTable('outbox')
      .set({ claimed_by: p.holder, claimed_until: p.until })
      .where('id', 'in', candidates)
      .returningAll()
      .execute();
    return rows.sort((a, b) => a.id - b.id);
  }

  /** Keeps the claim of `holder` on a row until `until`; false when the row is no longer its (or is done). */
  async extendClaim(id: number, holder: string, until: number): Promise<boolean> {
    if (!this.shared) return true;
    const r = await this.db
      .updateTable('outbox')
      .set({ claimed_until: until })
      .where('id', '=', id)
      .where('claimed_by', '=', holder)
      .where('done_at', 'is', null)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  /** The row is done; `trx` when its outcome is one commit with what it changed. */
  finish(id: number, outcome: string, now: number, attempts: number, trx?: Tx): Promise<void> {
    return this.unclaim(id, { done_at: now, outcome, attempts, last_error: null }, trx);
  }

  /** A failed attempt: counted, the row waits for its next time. */
  failed(id: number, f: OutboxFailure): Promise<void> {
    const first = f.firstFailedAt !== undefined ? { first_failed_at: f.firstFailedAt } : {};
    return this.unclaim(id, { attempts: f.attempts, next_at: f.nextAt, last_error: f.error, ...first });
  }

  /** Not a failure, only a later time (a flood pause); `error` says why, for /stickers_new. */
  defer(id: number, nextAt: number, error?: string): Promise<void> {
    return this.unclaim(id, { next_at: nextAt, ...(error !== undefined ? { last_error: error } : {}) });
  }

  private async unclaim(id: number, values: Updateable<Database['outbox']>, trx?: Tx): Promise<void> {
    await (trx ?? this.db)
      .updateTable('outbox')
      .set({ ...values, ...UNCLAIMED })
      .where('id', '=', id)
      .execute();
  }

  /** Gives back the claims of `holder`: on `ids` (unattempted, the pass stopped), or all (a dead process's). */
  async release(holder: string, ids?: number[]): Promise<void> {
    if (ids?.length === 0 || !this.shared) return;
    let query = this.db.updateTable('outbox').set(UNCLAIMED).where('claimed_by', '=', holder).where('done_at', 'is', null);
    if (ids) query = query.where('id', 'in', ids);
    await query.execute();
  }

  /** The row goes to the end of its lead's queue (after a card published anew). */
  async requeue(row: OutboxRow, now: number): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await this.finish(row.id, 'requeued', now, row.attempts, trx);
      const { id: _id, claimed_by: _by, claimed_until: _until, done_at: _done, outcome: _outcome, ...rest } = row;
      await trx
        .insertInto('outbox')
        .values({ ...rest, next_at: now })
        .execute();
    });
  }

  /** `npm run leads -- retry`: every row waiting after a failure is due at `now`; how many. */
  async failedDueNow(now: number): Promise<number> {
    const result = await this.db
      .updateTable('outbox')
      .set({ next_at: now })
      .where('done_at', 'is', null)
      .where('attempts', '>', 0)
      .where('next_at', '>', now)
      .executeTakeFirst();
    return Number(result.numUpdatedRows);
  }

  /** Holders of claims on rows not done, other than `self`. */
  async holders(self: string): Promise<string[]> {
    if (!this.shared) return [];
    const rows = await this.db
      .selectFrom('outbox')
      .select('claimed_by')
      .distinct()
      .where('done_at', 'is', null)
      .where('claimed_by', 'is not', null)
      .where('claimed_by', '<>', self)
      .execute();
    return rows.map((r) => r.claimed_by!);
  }

  /** Rows not done, per kind, and how many of them failed at least once. */
  async backlog() {
    const rows = await this.db
      .selectFrom('outbox')
      .select((eb) => [
        'kind',
        eb.fn.countAll<number>().as('waiting'),
        eb.fn.sum<number>(eb.case().when('attempts', '>', 0).then(1).else(0).end()).as('failing'),
      ])
      .where('done_at', 'is', null)
      .groupBy('kind')
      .execute();
    return rows.map((r) => ({ kind: r.kind, waiting: Number(r.waiting), failing: Number(r.failing ?? 0) }));
  }

  /** One delivery per endpoint of a webhook event, due at once. */
  async addDeliveries(event: { id: number; lead_id: number }, endpoints: string[], now: number, trx: Tx, replayedAt: number | null = null) {
    if (endpoints.length === 0) return;
    await trx
      .insertInto('outbox')
      .values(
        endpoints.map((target) => ({
          kind: 'webhook' as const,
          lead_id: event.lead_id,
          event_id: event.id,
          target,
          replayed_at: replayedAt,
          created_at: now,
          next_at: now,
        })),
      )
      .execute();
  }

  /** How many webhook deliveries wait for endpoints not configured any more (their secret is gone: never sent). */
  waitingForOtherEndpoints(endpoints: string[]): Promise<number> {
    const query = this.db.selectFrom('outbox').where('kind', '=', 'webhook').where('done_at', 'is', null);
    return countRows(endpoints.length > 0 ? query.where('target', 'not in', endpoints) : query);
  }
}
