import { Injectable } from '@nestjs/common';
import { InjectDb } from '../database/database.module';
import type { LeadsDb } from '../database/database';

/** When each throttled alert was last sent; in SQLite so a restart does not reset a throttle. */
@Injectable()
export class AlertThrottlesRepository {
  constructor(@InjectDb() private readonly db: LeadsDb) {}

  /**
   * Takes the right to send alert `key` now if it was last sent at least `intervalMs` ago. Atomic: of two callers
   * at once, one gets true. Returns the previous time (null if never) so a failed send can give the right back.
   */
  async claim(key: string, now: number, intervalMs: number): Promise<{ claimed: boolean; previous: number | null }> {
    return this.db.transaction().execute(async (trx) => {
      const row = await trx.selectFrom('alert_throttles').select('last_sent_at').where('key', '=', key).executeTakeFirst();
      if (row && now - row.last_sent_at < intervalMs) return { claimed: false, previous: row.last_sent_at };
      // The claim itself is one conditional upsert: on PostgreSQL two instances may both have read the old time
      // above (READ COMMITTED), and only one of them updates the row.
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

  async release(key: string, previous: number | null): Promise<void> {
    if (previous === null) await this.db.deleteFrom('alert_throttles').where('key', '=', key).execute();
    else await this.db.updateTable('alert_throttles').set({ last_sent_at: previous }).where('key', '=', key).execute();
  }
}
