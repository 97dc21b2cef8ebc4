import { Injectable } from '@nestjs/common';
import { InjectDb } from '../database/database.module';
import type { LeadsDb } from '../database/database';
import type { LeadEventKind } from '../database/schema';
import type { Tx } from './transactor';

/** Appends to a lead's story (`lead_events`). Never holds personal data. */
@Injectable()
export class LeadEventsRepository {
  constructor(@InjectDb() private readonly db: LeadsDb) {}

  /** `trx`: when the event must commit with the change it tells of (an anonymisation). */
  async record(
    leadId: number,
    kind: LeadEventKind,
    at: number,
    detail: string | null = null,
    repeatId: number | null = null,
    trx?: Tx,
  ): Promise<void> {
    await (trx ?? this.db).insertInto('lead_events').values({ lead_id: leadId, kind, at, detail, repeat_id: repeatId }).execute();
  }
}
