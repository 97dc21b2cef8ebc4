import { Injectable, Logger } from '@nestjs/common';
import { notFound } from '../http/validation';
import { Clock } from '../clock/clock';
import { LeadsRepository } from '../repositories/leads.repository';
import { OutboxRepository } from '../repositories/outbox.repository';
import { Transactor } from '../repositories/transactor';
import { WebhookEventsRepository } from '../repositories/webhook-events.repository';
import { endpointOrigin } from './webhook.sender';
import { WEBHOOK_EVENTS_LIMIT_DEFAULT, type WebhookEventsPageDto, type WebhookEventsQuery } from './webhook-events.dto';
import { replayWebhooks } from './webhook-replay';

/** Webhook events over HTTP: what was sent, how each delivery stands, and a redelivery (the CLI's `webhooks replay`). */
@Injectable()
export class WebhookEventsService {
  private readonly logger = new Logger('Webhooks');

  constructor(
    private readonly repo: WebhookEventsRepository,
    private readonly outbox: OutboxRepository,
    private readonly leadEvents: LeadsRepository,
    private readonly transactor: Transactor,
    private readonly clock: Clock,
  ) {}

  async list(query: WebhookEventsQuery): Promise<WebhookEventsPageDto> {
    const since = query.since === undefined ? null : Date.parse(query.since);
    const events = await this.repo.recentEvents(since, query.limit ?? WEBHOOK_EVENTS_LIMIT_DEFAULT);
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
    const now = this.clock.now();
    const { events, deliveries } = await replayWebhooks(this.repo, this.outbox, this.leadEvents, this.transactor, { publicId }, now);
    if (events.length === 0) throw notFound();
    this.logger.log({ msg: 'webhook redelivery queued', event_id: publicId, lead_number: events[0].lead_id, deliveries });
    return { queued: deliveries };
  }
}
