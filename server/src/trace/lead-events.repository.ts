import { Injectable } from '@nestjs/common';
import { InjectDb } from '../database/database.module';
import type { LeadsDb } from '../database/database';
import type { LeadEventKind } from '../database/schema';

/** Appends to a lead's story (`lead_events`). Never holds personal data. */
@Injectable()
export class LeadEventsRepository {
  constructor(@InjectDb() private readonly db: LeadsDb) {}

  async record(
    leadId: number,
    kind: LeadEventKind,
    at: number,
    detail: string | null = null,
    repeatId: number | null = null,
  ): Promise<void> {
    await this.db.insertInto('lead_events').values({ lead_id: leadId, kind, at, detail, repeat_id: repeatId }).execute();
  }
}
