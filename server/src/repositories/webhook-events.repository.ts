import { Injectable } from '@nestjs/common';
import { sql } from 'kysely';
import { InjectDb } from '../database/database.module';
import type { LeadsDb } from '../database/database';
import type { WebhookEventType } from '../database/schema';
import type { LeadStatus } from '../domain/lead-status';
import type { Tx } from './transactor';

/** A stored change not announced yet: the row that records it (`source_id`), its lead and when it happened. */
export interface ChangeRow {
  source_id: number;
  lead_id: number;
  at: number;
}

export interface RepeatRow extends ChangeRow {
  request_id: string;
  /** JSON object of the fields that differ from the lead (their names are announced, never their values). */
  changes: string;
}

export interface StatusChangeRow extends ChangeRow {
  from_status: LeadStatus;
  to_status: LeadStatus;
  user_id: number;
  user_name: string;
}

export interface AnonymisedRow extends ChangeRow {
  detail: string | null;
  /** The lead's own created_at: an erasure past the retention period is retention's. */
  lead_created_at: number;
}

/** An event to record, with one delivery per endpoint. */
/** A message of a lead's conversation (its text is personal: never in an event). */
export interface MessageRow extends ChangeRow {
  direction: 'in' | 'out';
  media: string | null;
}

export interface NewWebhookEvent {
  public_id: string;
  lead_id: number;
  type: WebhookEventType;
  source_id: number;
  at: number;
  data: string;
}

/** A webhook event as its delivery sends it. */
export interface WebhookEventRow {
  id: number;
  public_id: string;
  lead_id: number;
  type: WebhookEventType;
  at: number;
  data: string;
}

/** An event found for `webhooks replay`, with the endpoints it was addressed to. */
export interface StoredWebhookEvent {
  id: number;
  public_id: string;
  lead_id: number;
  type: WebhookEventType;
  endpoints: string[];
}

/** An event as `GET /webhooks/events` lists it, with the newest delivery row to each endpoint it was addressed to. */
export interface ListedWebhookEvent {
  public_id: string;
  lead_id: number;
  type: WebhookEventType;
  at: number;
  deliveries: {
    /** The endpoint's URL as configured: the reader names only its origin. */
    target: string;
    done_at: number | null;
    outcome: string | null;
    attempts: number;
    last_error: string | null;
  }[];
}

/** The rows of a source table (`alias.id`) that no `type` event announces yet: what every "new …" query below asks. */
const unannounced = (type: WebhookEventType, sourceId: 'l.id' | 'r.id' | 's.id' | 'v.id' | 'm.id') =>
  sql<boolean>`not exists (select 1 from webhook_events as e where e.type = ${type} and e.source_id = ${sql.ref(sourceId)})`;

/**
 * Signed webhooks' events (`webhook_sources`, `webhook_events`; their deliveries are outbox rows) and the reads of
 * the four tables whose rows are the changes they announce (leads, lead_repeats, lead_status_changes, lead_events of
 * kind `anonymised`): "rows above an id that have no event yet".
 */
@Injectable()
export class WebhookEventsRepository {
  constructor(@InjectDb() private readonly db: LeadsDb) {}

  /**
   * Where announcements start, once per type: the highest id of its source table now (history is never announced).
   * A type that has its row keeps it (insert or nothing: two instances starting together agree on the first).
   */
  async startSources(now: number): Promise<void> {
    const max = (table: 'leads' | 'lead_repeats' | 'lead_status_changes' | 'lead_events' | 'lead_messages') =>
      this.db
        .selectFrom(table)
        .select((eb) => eb.fn.max('id').as('id'))
        .executeTakeFirst()
        .then((r) => Number(r?.id ?? 0));
    const since: Record<WebhookEventType, number> = {
      'lead.created': await max('leads'),
      'lead.repeat': await max('lead_repeats'),
      'lead.status_changed': await max('lead_status_changes'),
      'lead.anonymised': await max('lead_events'),
      'lead.message': await max('lead_messages'),
    };
    await this.db
      .insertInto('webhook_sources')
      .values(Object.entries(since).map(([type, since_id]) => ({ type: type as WebhookEventType, since_id, created_at: now })))
      .onConflict((oc) => oc.column('type').doNothing())
      .execute();
  }

  /** Each type's starting id (a type without a row announces nothing). */
  async sinceIds(): Promise<Map<WebhookEventType, number>> {
    const rows = await this.db.selectFrom('webhook_sources').select(['type', 'since_id']).execute();
    return new Map(rows.map((r) => [r.type, r.since_id]));
  }

  /** The highest source id announced for `type` (null: none yet). */
  async lastAnnounced(type: WebhookEventType): Promise<number | null> {
    const row = await this.db
      .selectFrom('webhook_events')
      .select((eb) => eb.fn.max('source_id').as('id'))
      .where('type', '=', type)
      .executeTakeFirst();
    return row?.id === null || row?.id === undefined ? null : Number(row.id);
  }

  /** Leads with an id above `after` and no `lead.created` event, lowest first. */
  newLeads(after: number, limit: number): Promise<ChangeRow[]> {
    return this.db
      .selectFrom('leads as l')
      .select(['l.id as source_id', 'l.id as lead_id'])
      .select((eb) => eb.fn.coalesce('l.received_at', 'l.created_at').as('at'))
      .where('l.id', '>', after)
      .where(unannounced('lead.created', 'l.id'))
      .orderBy('l.id')
      .limit(limit)
      .execute();
  }

  /** Repeats with an id above `after` and no `lead.repeat` event, lowest first. */
  newRepeats(after: number, limit: number): Promise<RepeatRow[]> {
    return this.db
      .selectFrom('lead_repeats as r')
      .select(['r.id as source_id', 'r.lead_id', 'r.request_id', 'r.changes'])
      .select((eb) => eb.fn.coalesce('r.received_at', 'r.created_at').as('at'))
      .where('r.id', '>', after)
      .where(unannounced('lead.repeat', 'r.id'))
      .orderBy('r.id')
      .limit(limit)
      .execute();
  }

  /** Status changes with an id above `after` and no `lead.status_changed` event, lowest first. */
  newStatusChanges(after: number, limit: number): Promise<StatusChangeRow[]> {
    return this.db
      .selectFrom('lead_status_changes as s')
      .select(['s.id as source_id', 's.lead_id', 's.at', 's.from_status', 's.to_status', 's.user_id', 's.user_name'])
      .where('s.id', '>', after)
      .where(unannounced('lead.status_changed', 's.id'))
      .orderBy('s.id')
      .limit(limit)
      .execute();
  }

  /** `anonymised` lead events (the server's erasures and the CLI's) with an id above `after` and no event, lowest first. */
  newAnonymisations(after: number, limit: number): Promise<AnonymisedRow[]> {
    return this.db
      .selectFrom('lead_events as v')
      .innerJoin('leads as l', 'l.id', 'v.lead_id')
      .select(['v.id as source_id', 'v.lead_id', 'v.at', 'v.detail', 'l.created_at as lead_created_at'])
      .where('v.id', '>', after)
      .where('v.kind', '=', 'anonymised')
      .where(unannounced('lead.anonymised', 'v.id'))
      .orderBy('v.id')
      .limit(limit)
      .execute();
  }

  /** Messages of a conversation with an id above `after` and no `lead.message` event, lowest first. */
  newMessages(after: number, limit: number): Promise<MessageRow[]> {
    return this.db
      .selectFrom('lead_messages as m')
      .select(['m.id as source_id', 'm.lead_id', 'm.at', 'm.direction', 'm.media'])
      .where('m.id', '>', after)
      .where(unannounced('lead.message', 'm.id'))
      .orderBy('m.id')
      .limit(limit)
      .execute();
  }

  /** Records an event in `trx`; null when that change was announced already (another pass, another instance). */
  async recordEvent(event: NewWebhookEvent, trx: Tx): Promise<{ id: number; lead_id: number } | null> {
    const inserted = await trx
      .insertInto('webhook_events')
      .values(event)
      .onConflict((oc) => oc.columns(['type', 'source_id']).doNothing())
      .returning('id')
      .executeTakeFirst();
    return inserted ? { id: inserted.id, lead_id: event.lead_id } : null;
  }

  findEvent(id: number): Promise<WebhookEventRow | undefined> {
    return this.db
      .selectFrom('webhook_events')
      .select(['id', 'public_id', 'lead_id', 'type', 'at', 'data'])
      .where('id', '=', id)
      .executeTakeFirst();
  }

  /** The event with this public id, or every event of a lead (oldest first), each with the endpoints it went to. */
  async findEvents(key: { publicId: string } | { leadId: number }): Promise<StoredWebhookEvent[]> {
    let query = this.db.selectFrom('webhook_events').select(['id', 'public_id', 'lead_id', 'type']);
    query = 'publicId' in key ? query.where('public_id', '=', key.publicId) : query.where('lead_id', '=', key.leadId);
    const events = await query.orderBy('id').execute();
    if (events.length === 0) return [];
    const deliveries = await this.db
      .selectFrom('outbox')
      .select(['event_id', 'target'])
      .where('kind', '=', 'webhook')
      .where(
        'event_id',
        'in',
        events.map((e) => e.id),
      )
      .orderBy('id')
      .execute();
    return events.map((e) => ({
      ...e,
      endpoints: [...new Set(deliveries.filter((d) => d.event_id === e.id).map((d) => d.target))],
    }));
  }

  /**
   * Events that happened at or after `since` (all when null), newest first, at most `limit`; for each endpoint, the
   * state of its newest delivery row (a replay's, once one is queued).
   */
  async recentEvents(since: number | null, limit: number): Promise<ListedWebhookEvent[]> {
    let query = this.db.selectFrom('webhook_events').select(['id', 'public_id', 'lead_id', 'type', 'at']);
    if (since !== null) query = query.where('at', '>=', since);
    const events = await query.orderBy('at', 'desc').orderBy('id', 'desc').limit(limit).execute();
    if (events.length === 0) return [];
    const rows = await this.db
      .selectFrom('outbox')
      .select(['event_id', 'target', 'done_at', 'outcome', 'attempts', 'last_error'])
      .where('kind', '=', 'webhook')
      .where(
        'event_id',
        'in',
        events.map((e) => e.id),
      )
      .orderBy('id')
      .execute();
    return events.map(({ id, ...e }) => {
      const newest = new Map<string, ListedWebhookEvent['deliveries'][number]>();
      for (const { event_id, ...r } of rows) if (event_id === id) newest.set(r.target, { ...r, attempts: Number(r.attempts) });
      return { ...e, at: Number(e.at), deliveries: [...newest.values()] };
    });
  }
}
