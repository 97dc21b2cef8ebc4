import { Inject, Injectable, Logger } from '@nestjs/common';
import { invalidQuery, notFound } from '../http/validation';
import { Clock } from '../clock/clock';
import { SERVER_CONFIG } from '../config/config.module';
import type { ServerConfig } from '../config/config';
import { leadNumberOf } from '../domain/lead';
import { LeadsRepository } from '../repositories/leads.repository';
import { OutboxRepository } from '../repositories/outbox.repository';
import { Transactor } from '../repositories/transactor';
import { type StoredWebhookEvent, WebhookEventsRepository } from '../repositories/webhook-events.repository';
import { endpointOrigin } from './webhook.sender';
import { EXPORT_LIMIT_DEFAULT, QUERY_RULES } from '../export/export-query';
import { EVENT_ID, type WebhookEventsPageDto, type WebhookEventsQuery } from './webhook-events.dto';

/** What `webhooks replay` was given: an event's id (`evt_…`) or a lead number (`42`, `#42`). Null: neither. */
export function parseReplayKey(raw: string): { publicId: string } | { leadId: number } | null {
  const key = raw.trim();
  if (EVENT_ID.test(key)) return { publicId: key };
  const leadId = leadNumberOf(key);
  return leadId === null ? null : { leadId };
}

/** Webhook events over HTTP: what was sent, how each delivery stands, and a redelivery (also the CLI's `webhooks replay`). */
@Injectable()
export class WebhookEventsService {
  private readonly logger = new Logger('Webhooks');

  constructor(
    @Inject(SERVER_CONFIG) private readonly config: Pick<ServerConfig, 'webhooks'>,
    private readonly repo: WebhookEventsRepository,
    private readonly outbox: OutboxRepository,
    private readonly leadEvents: LeadsRepository,
    private readonly transactor: Transactor,
    private readonly clock: Clock,
  ) {}

  async list(query: WebhookEventsQuery): Promise<WebhookEventsPageDto> {
    const events = await this.repo.recentEvents(query.since ?? null, query.before ?? null, query.limit ?? EXPORT_LIMIT_DEFAULT);
    if (!events) throw invalidQuery({ before: QUERY_RULES.unknownEvent });
    return {
      events: events.map((e) => ({
        id: e.public_id,
        type: e.type,
        lead_number: e.lead_id,
        created_at: new Date(e.at).toISOString(),
        deliveries: e.deliveries.map((d) => ({
          endpoint: endpointOrigin(d.target),
          delivered_at: d.outcome === 'delivered' && d.done_at !== null ? new Date(d.done_at).toISOString() : null,
          attempts: d.attempts,
          last_error: d.last_error,
        })),
      })),
    };
  }

  /** 404 when no event has this id. */
  async redeliver(publicId: string): Promise<{ queued: number }> {
    const { events, deliveries, notConfigured } = await this.replay({ publicId });
    if (events.length === 0) throw notFound();
    this.logger.log({
      msg: 'webhook redelivery queued',
      event_id: publicId,
      lead_number: events[0].lead_id,
      deliveries,
      not_configured: notConfigured,
    });
    return { queued: deliveries };
  }

  /**
   * The event, or every event of the lead, queued again to each endpoint it went to that LEADS_WEBHOOK_URL still lists;
   * `notConfigured` counts the others (their secret is gone: a row queued to one would never be sent).
   */
  async replay(
    key: { publicId: string } | { leadId: number },
  ): Promise<{ events: StoredWebhookEvent[]; deliveries: number; notConfigured: number }> {
    const now = this.clock.now();
    const events = await this.repo.findEvents(key);
    const configured = new Set(this.config.webhooks.map((e) => e.url));
    const sent = events.flatMap((event) => event.endpoints.map((endpoint) => ({ event, endpoint })));
    const due = sent.filter(({ endpoint }) => configured.has(endpoint));
    await this.transactor.run(async (trx) => {
      for (const { event, endpoint } of due) {
        await this.outbox.addDeliveries(event, [endpoint], now, trx, now);
        const detail = `${event.type} ${event.public_id} to ${endpointOrigin(endpoint)} queued again`;
        await this.leadEvents.recordEvent(event.lead_id, 'webhook_replayed', now, detail, null, trx);
      }
    });
    return { events, deliveries: due.length, notConfigured: sent.length - due.length };
  }
}
