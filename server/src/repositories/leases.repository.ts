import { Injectable } from '@nestjs/common';
import { InjectDb } from '../database/database.module';
import type { LeadsDb } from '../database/database';

/** What instances take in turn: jobs' leases and webhook mode's updates; each take is one conditional upsert, so one wins. */
@Injectable()
export class LeasesRepository {
  constructor(@InjectDb() private readonly db: LeadsDb) {}

  /**
   * Takes or renews the lease: nobody holds it, its time ran out, or `holder` does; with `deadHolder` (a holder known to
   * be dead), also from it, unless someone else took it meanwhile.
   */
  async acquire(name: string, holder: string, now: number, until: number, deadHolder?: string): Promise<boolean> {
    const takers = deadHolder === undefined ? [holder] : [holder, deadHolder];
    const row = await this.db
      .insertInto('leases')
      .values({ name, holder, until })
      .onConflict((oc) =>
        oc
          .column('name')
          .doUpdateSet({ holder, until })
          .where((eb) => eb.or([eb('leases.until', '<', now), eb('leases.holder', 'in', takers)])),
      )
      .returning('holder')
      .executeTakeFirst();
    return row?.holder === holder;
  }

  /** A clean shutdown: another instance takes the job at once. */
  async release(name: string, holder: string): Promise<void> {
    await this.db.deleteFrom('leases').where('name', '=', name).where('holder', '=', holder).execute();
  }

  async holderOf(name: string): Promise<{ holder: string; until: number } | undefined> {
    return this.db.selectFrom('leases').select(['holder', 'until']).where('name', '=', name).executeTakeFirst();
  }

  /** Takes update `id`: never seen, or left unfinished since before `staleBefore` (its instance died mid-update). */
  async claimUpdate(id: number, now: number, staleBefore: number): Promise<boolean> {
    const row = await this.db
      .insertInto('telegram_updates')
      .values({ update_id: id, seen_at: now, handled_at: null })
      .onConflict((oc) =>
        oc
          .column('update_id')
          .doUpdateSet({ seen_at: now })
          .where('telegram_updates.handled_at', 'is', null)
          .where('telegram_updates.seen_at', '<', staleBefore),
      )
      .returning('update_id')
      .executeTakeFirst();
    return row !== undefined;
  }

  /** Whatever the outcome (Telegram is answered 200 either way). */
  async markUpdateHandled(id: number, now: number): Promise<void> {
    await this.db.updateTable('telegram_updates').set({ handled_at: now }).where('update_id', '=', id).execute();
  }

  /** Whether the update was handled already, is being handled (or was left unfinished), or was never seen. */
  async updateSeen(id: number): Promise<'handled' | 'unfinished' | 'unseen'> {
    const row = await this.db.selectFrom('telegram_updates').select('handled_at').where('update_id', '=', id).executeTakeFirst();
    if (!row) return 'unseen';
    return row.handled_at === null ? 'unfinished' : 'handled';
  }

  async pruneUpdates(before: number): Promise<number> {
    const result = await this.db.deleteFrom('telegram_updates').where('seen_at', '<', before).executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
