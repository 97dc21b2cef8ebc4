import { Injectable } from '@nestjs/common';
import type { StatusChange } from './leads.repository';
import type { Tx } from './transactor';

/** The history's user id of a change an integrator made (`POST /leads/{n}/status`): no Telegram user has it. */
export const CRM_USER_ID = 0;

/** Who changed a lead's status, from what to what, and when (`lead_status_changes`; the trace reads it back). */
@Injectable()
export class LeadStatusChangesRepository {
  /**
   * Takes the transaction of the status compare-and-set (LeadsRepository.changeStatus), never runs alone: a row
   * exactly for each change made.
   */
  async record(c: StatusChange, trx: Tx): Promise<void> {
    await trx
      .insertInto('lead_status_changes')
      .values({ lead_id: c.leadId, from_status: c.from, to_status: c.to, user_id: c.userId, user_name: c.userName, at: c.at })
      .execute();
  }
}
