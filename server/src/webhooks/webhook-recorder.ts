import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { Clock } from '../clock/clock';
import { SERVER_CONFIG } from '../config/config.module';
import type { ServerConfig } from '../config/config';
import { WEBHOOK_EVENT_TYPES, type WebhookEventType } from '../database/schema';
import type { LeadAnonymisedEvent } from '../domain/events';
import { parseRepeatChanges } from '../domain/lead';
import { CRM_USER_ID } from '../repositories/leads.repository';
import { OutboxRepository } from '../repositories/outbox.repository';
import { Transactor } from '../repositories/transactor';
import { endpointOrigin } from './webhook.sender';
import { type AnonymisedRow, type NewWebhookEvent, WebhookEventsRepository } from '../repositories/webhook-events.repository';
import { DAY_MS } from '../clock/local-time';

type AnonymisedReason = LeadAnonymisedEvent['reason'];

/** Rows read per type and pass; the rest follow at the next pass. */
const BATCH = 100;
/** How far below the highest row announced a pass looks again: PostgreSQL takes ids at insert, not at commit. */
const LOOK_BACK_IDS = 1000;

/** Stored changes turned into events and a delivery per endpoint, in one commit; idempotent by (type, source row). */
@Injectable()
export class WebhookRecorder {
  private readonly logger = new Logger('Webhooks');
  /** Reasons heard from `lead.anonymised` Nest events, until the erase is announced. */
  private readonly reasons = new Map<number, AnonymisedReason>();

  constructor(
    @Inject(SERVER_CONFIG) private readonly config: ServerConfig,
    private readonly repo: WebhookEventsRepository,
    private readonly outbox: OutboxRepository,
    private readonly transactor: Transactor,
    private readonly clock: Clock,
  ) {}

  /** At start: where announcements start for types without one; deliveries left orphaned. */
  async start(): Promise<void> {
    await this.repo.startSources(this.clock.now());
    const endpoints = this.config.webhooks.map((e) => e.url);
    this.logger.log({ msg: `webhooks to ${endpoints.length} endpoint(s)`, endpoints: endpoints.map(endpointOrigin) });
    const orphaned = await this.outbox.waitingForOtherEndpoints(endpoints);
    if (orphaned > 0)
      this.logger.warn({
        msg: 'webhook deliveries wait for endpoints no longer in LEADS_WEBHOOK_URL: they are not sent',
        deliveries: orphaned,
      });
  }

  /** The server's anonymisation said why (the `anonymised` row does not tell a number from retention). */
  noteAnonymised(leadId: number, reason: AnonymisedReason): void {
    this.reasons.set(leadId, reason);
  }

  /** Records the events of changes not announced yet. */
  async recordNew(): Promise<void> {
    const since = await this.repo.sinceIds();
    /** The first type (in their order) whose batch came back full, and its last row's time: more of it follows from then on. */
    let more = { at: Infinity, type: null as WebhookEventType | null };
    /** The type's rows not announced yet (none before its start). */
    const unannounced = async <R extends { at: number }>(type: WebhookEventType, read: (after: number) => Promise<R[]>) => {
      const start = since.get(type);
      if (start === undefined) return [];
      const rows = await read(Math.max(start, ((await this.repo.lastAnnounced(type)) ?? 0) - LOOK_BACK_IDS));
      if (rows.length === BATCH && rows[BATCH - 1].at < more.at) more = { at: rows[BATCH - 1].at, type };
      return rows;
    };
    const events: NewWebhookEvent[] = [];
    const event = (type: WebhookEventType, row: { source_id: number; lead_id: number; at: number }, data: object) =>
      events.push({
        public_id: `evt_${randomUUID().replace(/-/g, '')}`,
        type,
        lead_id: row.lead_id,
        source_id: row.source_id,
        at: row.at,
        data: JSON.stringify(data),
      });

    for (const row of await unannounced('lead.created', (after) => this.repo.newLeads(after, BATCH))) event('lead.created', row, {});
    for (const row of await unannounced('lead.repeat', (after) => this.repo.newRepeats(after, BATCH)))
      event('lead.repeat', row, {
        repeat: {
          request_id: row.request_id,
          received_at: new Date(row.at).toISOString(),
          changed_fields: Object.keys(parseRepeatChanges(row.changes)),
        },
      });
    for (const row of await unannounced('lead.status_changed', (after) => this.repo.newStatusChanges(after, BATCH)))
      event('lead.status_changed', row, {
        from: row.from_status,
        to: row.to_status,
        // A CRM's change (POST /leads/{n}/status) is by no Telegram user: its id is null.
        by: { telegram_user_id: row.user_id === CRM_USER_ID ? null : row.user_id, name: row.user_name },
      });
    for (const row of await unannounced('lead.anonymised', (after) => this.repo.newAnonymisations(after, BATCH)))
      event('lead.anonymised', row, { reason: this.reasonOf(row) });
    // The account is personal: the delivery's lead shows it (GET /leads's telegram_account), the event keeps none of it.
    for (const row of await unannounced('lead.telegram_bound', (after) => this.repo.newBindings(after, BATCH)))
      event('lead.telegram_bound', row, {});
    for (const row of await unannounced('lead.message', (after) => this.repo.newMessages(after, BATCH)))
      event('lead.message', row, { message: { id: row.source_id, direction: row.direction, media: row.media } });
    // Changes of one lead in the order they happened (a pass after an outage reads many at once); at one instant, by
    // type. Only what came before the rows a full batch left unread (at that instant, that type's own): the rest at the
    // next pass, so that no lead's change is announced before an earlier one of another type (its lead.created).
    const due = events.filter((e) => e.at < more.at || (e.at === more.at && e.type === more.type));
    if (due.length === 0) return;
    const order = (e: NewWebhookEvent) => WEBHOOK_EVENT_TYPES.indexOf(e.type);
    due.sort((a, b) => a.at - b.at || order(a) - order(b) || a.source_id - b.source_id);
    const endpoints = this.config.webhooks.map((e) => e.url);
    const now = this.clock.now();
    let recorded = 0;
    await this.transactor.run(async (trx) => {
      for (const e of due) {
        const stored = await this.repo.recordEvent(e, trx);
        if (!stored) continue;
        await this.outbox.addDeliveries(stored, endpoints, now, trx);
        recorded += 1;
      }
    });
    for (const e of due) if (e.type === 'lead.anonymised') this.reasons.delete(e.lead_id);
    this.logger.log({ msg: 'webhook events recorded', events: recorded });
  }

  /** As the server's Nest event said; else `contact` (the CLI's `forget` by contact); else retention or number by age. */
  private reasonOf(row: AnonymisedRow): AnonymisedReason {
    const heard = this.reasons.get(row.lead_id);
    if (heard) return heard;
    if (row.detail?.includes('by contact')) return 'contact';
    return row.lead_created_at <= row.at - this.config.housekeeping.retentionDays * DAY_MS ? 'retention' : 'number';
  }
}
