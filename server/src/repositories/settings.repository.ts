import { Injectable } from '@nestjs/common';
import { InjectDb } from '../database/database.module';
import type { LeadsDb } from '../database/database';
import type { Tx } from './transactor';

/** What the app remembers across restarts: learnt facts, the once-per-period jobs run, the throttled alerts' last times. */
@Injectable()
export class SettingsRepository {
  constructor(@InjectDb() private readonly db: LeadsDb) {}

  async get(key: string, trx?: Tx): Promise<string | null> {
    const row = await (trx ?? this.db).selectFrom('settings').select('value').where('key', '=', key).executeTakeFirst();
    return row?.value ?? null;
  }

  async set(key: string, value: string, at: number, trx?: Tx): Promise<void> {
    await (trx ?? this.db)
      .insertInto('settings')
      .values({ key, value, updated_at: at })
      .onConflict((oc) => oc.column('key').doUpdateSet({ value, updated_at: at }))
      .execute();
  }

  /**
   * `to`'s value, after moving `from`'s there (once, unless `to` has one): a fact an earlier version kept under another
   * key. A write only when `from` is there: a database that takes no writes still answers.
   */
  async rekey(from: string, to: string, at: number): Promise<string | null> {
    if ((await this.get(from)) === null) return this.get(to);
    return this.db.transaction().execute(async (trx) => {
      const kept = await trx.deleteFrom('settings').where('key', '=', from).returning('value').executeTakeFirst();
      if (kept)
        await trx
          .insertInto('settings')
          .values({ key: to, value: kept.value, updated_at: at })
          .onConflict((oc) => oc.column('key').doNothing())
          .execute();
      return this.get(to, trx);
    });
  }

  /** Readiness: a tiny committed upsert (the file takes a write at all). */
  async probeWrite(at: number): Promise<void> {
    await this.set('ready_probe', 'ok', at);
  }

  /** A committed write that needs new pages (inserted and deleted in one transaction): a full disk fails it as a new lead. */
  async probeGrowth(bytes: number, at: number): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await this.set('ready_growth_probe', 'x'.repeat(bytes), at, trx);
      await trx.deleteFrom('settings').where('key', '=', 'ready_growth_probe').execute();
    });
  }

  /** Takes a once-per-period job (`digest:2026-11-29`); false when it already ran. */
  async claimRun(key: string, now: number): Promise<boolean> {
    const r = await this.db
      .insertInto('job_runs')
      .values({ key, at: now })
      .onConflict((oc) => oc.column('key').doNothing())
      .executeTakeFirst();
    return Number(r.numInsertedOrUpdatedRows ?? 0) === 1;
  }

  async releaseRun(key: string): Promise<void> {
    await this.db.deleteFrom('job_runs').where('key', '=', key).execute();
  }

  /** Takes alert `key` if last sent at least `intervalMs` ago (one of two callers at once); the previous time, to give it back. */
  async claimAlert(key: string, now: number, intervalMs: number): Promise<{ claimed: boolean; previous: number | null }> {
    return this.db.transaction().execute(async (trx) => {
      const row = await trx.selectFrom('alert_throttles').select('last_sent_at').where('key', '=', key).executeTakeFirst();
      if (row && now - row.last_sent_at < intervalMs) return { claimed: false, previous: row.last_sent_at };
      // A conditional upsert: on PostgreSQL two instances may both have read the old time (READ COMMITTED).
      const claimed = await trx
        .insertInto('alert_throttles')
        .values({ key, last_sent_at: now })
        .onConflict((oc) =>
          oc
            .column('key')
            .doUpdateSet({ last_sent_at: now })
            .where('alert_throttles.last_sent_at', '<=', now - intervalMs),
        )
        .returning('last_sent_at')
        .executeTakeFirst();
      return { claimed: claimed !== undefined, previous: row?.last_sent_at ?? null };
    });
  }

  async releaseAlert(key: string, previous: number | null): Promise<void> {
    if (previous === null) await this.db.deleteFrom('alert_throttles').where('key', '=', key).execute();
    else await this.db.updateTable('alert_throttles').set({ last_sent_at: previous }).where('key', '=', key).execute();
  }
}
