import { Injectable } from '@nestjs/common';
import { InjectDb } from '../database/database.module';
import type { LeadsDb } from '../database/database';
import type { RateEventKind } from '../database/schema';
import { dialectOf } from '../database/dialect-sql';

/** Sliding-window counters over `rate_events`: they survive a restart. */
@Injectable()
export class RateEventsRepository {
  /** Other instances may write these events too (PostgreSQL): an index of them in one instance's memory is incomplete. */
  readonly sharedAcrossInstances: boolean;

  constructor(@InjectDb() private readonly db: LeadsDb) {
    this.sharedAcrossInstances = dialectOf(db) === 'postgres';
  }

  /** The time until the window has room again (null: now), from the limit-th newest event in it, never a count. */
  async msUntilRoom(q: { kind: RateEventKind; keyHash: string; limit: number; windowMs: number; now: number }): Promise<number | null> {
    const row = await this.db
      .selectFrom('rate_events')
      .select('at')
      .where('kind', '=', q.kind)
      .where('key_hash', '=', q.keyHash)
      .where('at', '>', q.now - q.windowMs)
      .orderBy('at', 'desc')
      .limit(1)
      .offset(q.limit - 1)
      .executeTakeFirst();
    return row ? row.at + q.windowMs - q.now : null;
  }

  async record(kind: RateEventKind, keyHash: string, at: number): Promise<void> {
    await this.db.insertInto('rate_events').values({ kind, key_hash: keyHash, at }).execute();
  }

  /** Events of a kind since `since` (to rebuild in-memory indexes at start). */
  recent(kind: RateEventKind, since: number) {
    return this.db.selectFrom('rate_events').select(['key_hash', 'at']).where('kind', '=', kind).where('at', '>', since).execute();
  }

  /** Deletes events at or before `at`, and the per-minute counts of minutes wholly before it (housekeeping). */
  async pruneBefore(at: number): Promise<number> {
    const result = await this.db.deleteFrom('rate_events').where('at', '<=', at).executeTakeFirst();
    const minute = Math.floor(at / 60_000);
    await this.db.deleteFrom('rate_minutes').where('minute', '<', minute).execute();
    return Number(result.numDeletedRows);
  }
}
