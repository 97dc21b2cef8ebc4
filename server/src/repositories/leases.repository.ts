import { Injectable } from '@nestjs/common';
import { InjectDb } from '../database/database.module';
import type { LeadsDb } from '../database/database';

/** Leases of once-across-instances jobs, one row per job. */
@Injectable()
export class LeasesRepository {
  constructor(@InjectDb() private readonly db: LeadsDb) {}

  /**
   * Takes or renews the lease `name` for `holder` until `until`: granted when nobody holds it, when its holder's time
   * ran out, or when `holder` holds it already. One statement (an upsert whose update has a condition), so two
   * instances asking at once cannot both get it, on SQLite or PostgreSQL.
   */
  async acquire(name: string, holder: string, now: number, until: number): Promise<boolean> {
    const row = await this.db
      .insertInto('leases')
      .values({ name, holder, until })
      .onConflict((oc) =>
        oc
          .column('name')
          .doUpdateSet({ holder, until })
          .where((eb) => eb.or([eb('leases.until', '<', now), eb('leases.holder', '=', holder)])),
      )
      .returning('holder')
      .executeTakeFirst();
    return row?.holder === holder;
  }

  /** Takes the lease from `from` (a holder known to be dead), unless someone else took it meanwhile. */
  async takeOver(name: string, from: string, holder: string, until: number): Promise<boolean> {
    const result = await this.db
      .updateTable('leases')
      .set({ holder, until })
      .where('name', '=', name)
      .where('holder', '=', from)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /** Gives the lease up (a clean shutdown), so another instance takes the job at once. */
  async release(name: string, holder: string): Promise<void> {
    await this.db.deleteFrom('leases').where('name', '=', name).where('holder', '=', holder).execute();
  }

  async holderOf(name: string): Promise<{ holder: string; until: number } | undefined> {
    return this.db.selectFrom('leases').select(['holder', 'until']).where('name', '=', name).executeTakeFirst();
  }
}
