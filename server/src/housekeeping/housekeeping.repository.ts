import { Injectable } from '@nestjs/common';
import { InjectDb } from '../database/database.module';
import type { LeadsDb } from '../database/database';

@Injectable()
export class HousekeepingRepository {
  constructor(@InjectDb() private readonly db: LeadsDb) {}

  /** Published cards still `new`, created before `cutoff`, never reminded. */
  async dueReminders(cutoff: number, limit: number) {
    return this.db
      .selectFrom('leads')
      .select(['id', 'chat_id', 'message_id', 'created_at'])
      .where('status', '=', 'new')
      .where('published_at', 'is not', null)
      .where('reminded_at', 'is', null)
      .where('anonymised_at', 'is', null)
      .where('created_at', '<=', cutoff)
      .orderBy('id')
      .limit(limit)
      .execute();
  }

  /** Takes the one reminder of a lead; of two runs at once, one gets it. */
  async claimReminder(leadId: number, now: number): Promise<boolean> {
    const r = await this.db
      .updateTable('leads')
      .set({ reminded_at: now })
      .where('id', '=', leadId)
      .where('reminded_at', 'is', null)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  async releaseReminder(leadId: number): Promise<void> {
    await this.db.updateTable('leads').set({ reminded_at: null }).where('id', '=', leadId).execute();
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
}
