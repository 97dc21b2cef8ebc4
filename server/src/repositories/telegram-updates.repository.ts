import { Injectable } from '@nestjs/common';
import { InjectDb } from '../database/database.module';
import type { LeadsDb } from '../database/database';

/** Whether an update was handled already, is being handled (or was left unfinished), or was never seen. */
export type SeenUpdate = 'handled' | 'unfinished' | 'unseen';

/** Telegram updates taken in webhook mode (migration 2026-12-01-0012), shared by every instance. */
@Injectable()
export class TelegramUpdatesRepository {
  constructor(@InjectDb() private readonly db: LeadsDb) {}

  /**
   * Takes update `id` for handling at `now`: granted when it was never seen, or when a claim of it was left unfinished
   * since before `staleBefore` (the instance that took it died mid-update). One statement (an upsert whose update has
   * a condition), so two instances given the same update at once cannot both get it, on SQLite or PostgreSQL.
   */
  async claim(id: number, now: number, staleBefore: number): Promise<boolean> {
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

  /** The handling of a claimed update is over (its outcome whatever it was: Telegram is answered 200 either way). */
  async markHandled(id: number, now: number): Promise<void> {
    await this.db.updateTable('telegram_updates').set({ handled_at: now }).where('update_id', '=', id).execute();
  }

  async seen(id: number): Promise<SeenUpdate> {
    const row = await this.db.selectFrom('telegram_updates').select('handled_at').where('update_id', '=', id).executeTakeFirst();
    if (!row) return 'unseen';
    return row.handled_at === null ? 'unfinished' : 'handled';
  }

  /** Forgets the updates seen before `before`; how many. */
  async prune(before: number): Promise<number> {
    const result = await this.db.deleteFrom('telegram_updates').where('seen_at', '<', before).executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
