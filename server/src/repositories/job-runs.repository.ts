import { Injectable } from '@nestjs/common';
import { InjectDb } from '../database/database.module';
import type { LeadsDb } from '../database/database';

/** Once-per-period jobs (`job_runs`): a claim survives a restart, so the daily digest goes out once a day. */
@Injectable()
export class JobRunsRepository {
  constructor(@InjectDb() private readonly db: LeadsDb) {}

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
