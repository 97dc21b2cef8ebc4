import { Injectable } from '@nestjs/common';
import { InjectDb } from '../database/database.module';
import type { LeadsDb } from '../database/database';
import type { LeadStatus } from '../database/schema';

export interface StatusChange {
  leadId: number;
  from: LeadStatus;
  to: LeadStatus;
  userId: number;
  userName: string;
  at: number;
}

@Injectable()
export class LeadStatusRepository {
  constructor(@InjectDb() private readonly db: LeadsDb) {}

  /**
   * Compare-and-set: the status changes only if it is still `from` and the lead is not anonymised; the change is
   * recorded with who and when, and the card marked for rewriting. One transaction; false when someone was first.
   */
  async change(c: StatusChange): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const result = await trx
        .updateTable('leads')
        .set({
          status: c.to,
          status_changed_by: c.userName,
          status_changed_at: c.at,
          card_dirty_at: c.at,
          card_refresh_attempts: 0,
          card_refresh_next_at: c.at,
        })
        .where('id', '=', c.leadId)
        .where('status', '=', c.from)
        .where('anonymised_at', 'is', null)
        .executeTakeFirst();
      if (Number(result.numUpdatedRows) !== 1) return false;
      await trx
        .insertInto('lead_status_changes')
        .values({ lead_id: c.leadId, from_status: c.from, to_status: c.to, user_id: c.userId, user_name: c.userName, at: c.at })
        .execute();
      return true;
    });
  }

  history(leadId: number) {
    return this.db.selectFrom('lead_status_changes').selectAll().where('lead_id', '=', leadId).orderBy('at').orderBy('id').execute();
  }
}
