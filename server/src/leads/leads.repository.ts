import { Injectable } from '@nestjs/common';
import { sql } from 'kysely';
import { InjectDb } from '../database/database.module';
import type { LeadsDb } from '../database/database';
import type { Lead, NewLead, NewLeadRepeat } from '../database/schema';

export interface KnownRequest {
  leadId: number;
  repeat: boolean;
}

/** Every query on `leads` and `lead_repeats` that the submit path needs. Pass `trx` inside a transaction. */
@Injectable()
export class LeadsRepository {
  constructor(@InjectDb() private readonly db: LeadsDb) {}

  /** A request_id is known when a lead or a repeat was stored under it. */
  async findRequest(requestId: string, ex: LeadsDb = this.db): Promise<KnownRequest | undefined> {
    const row = await ex
      .selectFrom('leads')
      .select(['id as lead_id', sql<number>`0`.as('repeat')])
      .where('request_id', '=', requestId)
      .unionAll(
        ex
          .selectFrom('lead_repeats')
          .select(['lead_id', sql<number>`1`.as('repeat')])
          .where('request_id', '=', requestId),
      )
      .limit(1)
      .executeTakeFirst();
    return row ? { leadId: row.lead_id, repeat: row.repeat === 1 } : undefined;
  }

  /**
   * Seed's repeat rule: the newest lead created since `since`, not spam, not anonymised, with the same username
   * (case-insensitive) or the same phone.
   */
  async findRepeatTarget(
    match: { telegramKey: string; phone: string; since: number },
    ex: LeadsDb = this.db,
  ): Promise<Lead | undefined> {
    return ex
      .selectFrom('leads')
      .selectAll()
      .where((eb) => eb.or([eb('telegram_key', '=', match.telegramKey), eb('phone', '=', match.phone)]))
      .where('created_at', '>', match.since)
      .where('status', '!=', 'spam')
      .where('anonymised_at', 'is', null)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(1)
      .executeTakeFirst();
  }

  async insertLead(lead: NewLead, ex: LeadsDb = this.db): Promise<number> {
    const row = await ex.insertInto('leads').values(lead).returning('id').executeTakeFirstOrThrow();
    return row.id;
  }

  async insertRepeat(repeat: NewLeadRepeat, ex: LeadsDb = this.db): Promise<number> {
    const row = await ex.insertInto('lead_repeats').values(repeat).returning('id').executeTakeFirstOrThrow();
    return row.id;
  }

  async findById(id: number, ex: LeadsDb = this.db): Promise<Lead | undefined> {
    return ex.selectFrom('leads').selectAll().where('id', '=', id).executeTakeFirst();
  }
}
