import { Injectable } from '@nestjs/common';
import { InjectDb } from '../database/database.module';
import type { LeadsDb } from '../database/database';

/** The reads of a lead's whole story (the trace); read-only, so the CLI runs it beside the running server. */
@Injectable()
export class TraceRepository {
  constructor(@InjectDb() private readonly db: LeadsDb) {}

  async leadIdOfRequest(requestId: string): Promise<number | undefined> {
    const row = await this.db.selectFrom('leads').select('id').where('request_id', '=', requestId).executeTakeFirst();
    return row?.id;
  }

  /** The lead a repeat's request_id was attached to. */
  async leadIdOfRepeat(requestId: string): Promise<number | undefined> {
    const row = await this.db.selectFrom('lead_repeats').select('lead_id').where('request_id', '=', requestId).executeTakeFirst();
    return row?.lead_id;
  }

  lead(id: number) {
    return this.db.selectFrom('leads').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** Oldest first, as they came. */
  repeats(leadId: number) {
    return this.db.selectFrom('lead_repeats').selectAll().where('lead_id', '=', leadId).orderBy('created_at').orderBy('id').execute();
  }

  statusChanges(leadId: number) {
    return this.db.selectFrom('lead_status_changes').selectAll().where('lead_id', '=', leadId).orderBy('at').orderBy('id').execute();
  }

  events(leadId: number) {
    return this.db.selectFrom('lead_events').selectAll().where('lead_id', '=', leadId).orderBy('id').execute();
  }

  /** The lead's conversation in Telegram, oldest first, without its text or authors (personal). */
  messages(leadId: number) {
    return this.db
      .selectFrom('lead_messages')
      .select(['at', 'direction', 'media', 'state', 'error'])
      .where('lead_id', '=', leadId)
      .orderBy('id')
      .execute();
  }

  /** The lead's outbox rows, oldest first: its card's, its edits', its repeats' pings and its fallback replies' attempts. */
  outbox(leadId: number) {
    return this.db
      .selectFrom('outbox')
      .select(['kind', 'repeat_id', 'attempts', 'next_at', 'done_at', 'last_error'])
      .where('lead_id', '=', leadId)
      .where('kind', '!=', 'webhook')
      .orderBy('id')
      .execute();
  }
}
