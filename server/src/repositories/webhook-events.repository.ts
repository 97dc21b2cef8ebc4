import { Injectable } from '@nestjs/common';
import { type Insertable, type SelectQueryBuilder, sql, type SqlBool } from 'kysely';
import { InjectDb } from '../database/database.module';
import type { LeadsDb } from '../database/database';
import type { Database, WebhookEventType } from '../database/schema';
import type { Tx } from './transactor';

export type NewWebhookEvent = Omit<Insertable<Database['webhook_events']>, 'id'>;

export type AnonymisedRow = Awaited<ReturnType<WebhookEventsRepository['newAnonymisations']>>[number];

/** An event found for `webhooks replay`, with the endpoints it was addressed to. */
export type StoredWebhookEvent = Awaited<ReturnType<WebhookEventsRepository['findEvents']>>[number];

/** The rows of a source table (`alias.id`) above `after` that no `type` event announces yet, lowest first. */
const unannounced =
  (alias: 'l' | 'r' | 's' | 'v' | 'm', type: WebhookEventType, after: number, limit: number) =>
  <DB, TB extends keyof DB, O>(query: SelectQueryBuilder<DB, TB, O>) => {
    const id = sql.ref(`${alias}.id`);
    return query
      .where(sql<SqlBool>`${id} > ${after}`)
      .where(sql<SqlBool>`not exists (select 1 from webhook_events as e where e.type = ${type} and e.source_id = ${id})`)
      .orderBy(id)
      .limit(limit);
  };

/** Signed webhooks' events (their deliveries are outbox rows) and the reads of the changes they announce. */
@Injectable()
export class WebhookEventsRepository {
  constructor(@InjectDb() private readonly db: LeadsDb) {}

  /** Where each type's announcements start, once: its source table's highest id now (a type's existing row is kept). */
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
      'lead.telegram_bound': await max('lead_events'),
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
    return row?.id == null ? null : Number(row.id);
  }

  newLeads(after: number, limit: number) {
    return this.db
      .selectFrom('leads as l')
      .select((eb) => ['l.id as source_id', 'l.id as lead_id', eb.fn.coalesce('l.received_at', 'l.created_at').as('at')])
      .$call(unannounced('l', 'lead.created', after, limit))
      .execute();
  }

  newRepeats(after: number, limit: number) {
    return this.db
      .selectFrom('lead_repeats as r')
      .select((eb) => [
        'r.id as source_id',
        'r.lead_id',
        'r.request_id',
        'r.changes',
        eb.fn.coalesce('r.received_at', 'r.created_at').as('at'),
      ])
      .$call(unannounced('r', 'lead.repeat', after, limit))
      .execute();
  }

  newStatusChanges(after: number, limit: number) {
    return this.db
      .selectFrom('lead_status_changes as s')
      .select(['s.id as source_id', 's.lead_id', 's.at', 's.from_status', 's.to_status', 's.user_id', 's.user_name'])
      .$call(unannounced('s', 'lead.status_changed', after, limit))
      .execute();
  }

  /**
   * With the lead's own created_at: an erasure past the retention period is retention's. The kinds are literals, as in
   * their partial indexes: a plan made without the parameter's value (PostgreSQL's generic plans) could not use them.
   */
  newAnonymisations(after: number, limit: number) {
    return this.db
      .selectFrom('lead_events as v')
      .innerJoin('leads as l', 'l.id', 'v.lead_id')
      .select(['v.id as source_id', 'v.lead_id', 'v.at', 'v.detail', 'l.created_at as lead_created_at'])
      .where('v.kind', '=', sql.lit('anonymised'))
      .$call(unannounced('v', 'lead.anonymised', after, limit))
      .execute();
  }

  /** A visitor's Telegram account bound to the lead (its `telegram_bound` history row, written in the binding's commit). */
  newBindings(after: number, limit: number) {
    return this.db
      .selectFrom('lead_events as v')
      .select(['v.id as source_id', 'v.lead_id', 'v.at'])
      .where('v.kind', '=', sql.lit('telegram_bound'))
      .$call(unannounced('v', 'lead.telegram_bound', after, limit))
      .execute();
  }

  /** Their text is personal: never in an event. */
  newMessages(after: number, limit: number) {
    return this.db
      .selectFrom('lead_messages as m')
      .select(['m.id as source_id', 'm.lead_id', 'm.at', 'm.direction', 'm.media'])
      .$call(unannounced('m', 'lead.message', after, limit))
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

  findEvent(id: number) {
    return this.db
      .selectFrom('webhook_events')
      .select(['id', 'public_id', 'lead_id', 'type', 'at', 'data'])
      .where('id', '=', id)
      .executeTakeFirst();
  }

  /** The event with this public id, or every event of a lead (oldest first), each with the endpoints it went to. */
  async findEvents(key: { publicId: string } | { leadId: number }) {
    let query = this.db.selectFrom('webhook_events').select(['id', 'public_id', 'lead_id', 'type']);
    query = 'publicId' in key ? query.where('public_id', '=', key.publicId) : query.where('lead_id', '=', key.leadId);
    const events = await query.orderBy('id').execute();
    const deliveries = await this.deliveriesOf(events);
    return events.map((e) => ({ ...e, endpoints: [...new Set(deliveries.filter((d) => d.event_id === e.id).map((d) => d.target))] }));
  }

  /**
   * `GET /webhooks/events`: events since `since` and older than the event `before` (its public id), newest first, each
   * with its newest delivery row per endpoint; null when no event has the id `before`.
   */
  async recentEvents(since: number | null, before: string | null, limit: number) {
    let query = this.db.selectFrom('webhook_events').select(['id', 'public_id', 'lead_id', 'type', 'at']);
    if (since !== null) query = query.where('at', '>=', since);
    if (before !== null) {
      const older = await this.db.selectFrom('webhook_events').select(['id', 'at']).where('public_id', '=', before).executeTakeFirst();
      if (!older) return null;
      query = query.where((eb) => eb(eb.refTuple('at', 'id'), '<', eb.tuple(older.at, older.id)));
    }
    const events = await query.orderBy('at', 'desc').orderBy('id', 'desc').limit(limit).execute();
    const rows = await this.deliveriesOf(events);
    return events.map(({ id, ...e }) => {
      const newest = new Map<string, Omit<(typeof rows)[number], 'event_id'>>();
      for (const { event_id, ...r } of rows) if (event_id === id) newest.set(r.target, { ...r, attempts: Number(r.attempts) });
      return { ...e, at: Number(e.at), deliveries: [...newest.values()] };
    });
  }

  /** Oldest first. */
  private async deliveriesOf(events: { id: number }[]) {
    if (events.length === 0) return [];
    const ids = events.map((e) => e.id);
    return this.db
      .selectFrom('outbox')
      .select(['event_id', 'target', 'done_at', 'outcome', 'attempts', 'last_error'])
      .where('kind', '=', 'webhook')
      .where('event_id', 'in', ids)
      .orderBy('id')
      .execute();
  }
}
