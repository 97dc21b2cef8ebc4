import { Inject, Injectable, Logger } from '@nestjs/common';
import { Clock } from '../clock/clock';
import { SERVER_CONFIG } from '../config/config.module';
import type { ServerConfig, WebhookEndpoint } from '../config/config';
import { type ExportedLead, ExportService } from '../export/export.service';
import { retryDelayMs } from '../outbox/retry-schedule';
import { Metrics } from '../observability/metrics';
import { LeadEventsRepository } from '../repositories/lead-events.repository';
import { Transactor } from '../repositories/transactor';
import { type DueDelivery, WebhookDeliveriesRepository } from '../repositories/webhook-deliveries.repository';
import { endpointOrigin, WEBHOOK_ALERT_AFTER_MS, WebhookAlerts } from './webhook-alerts';
import { SIGNATURE_HEADER, signatureHeader } from './webhook-signature';
import { WebhookSender } from './webhook.sender';

/** Deliveries read at a time per endpoint, and batches per endpoint and pass (the rest wait for the next pass). */
const BATCH = 10;
const ROUNDS = 10;

/**
 * Sends due deliveries: each URL in its own loop, oldest first (a URL that times out or cannot be reached
 * gets no more attempts in that pass, so it holds the next pass — and the other URLs' next events — one timeout at most),
 * a lead's events in order — a delivery waits while an earlier one of its lead to that endpoint is not delivered. A
 * 2xx is success; anything else, a network error or 10 s without an answer is a failure, retried on the cards'
 * schedule (5 s, 15 s, 60 s, 5 min, then every 15 min, forever), with the admin alert once one has failed for 30
 * minutes. Each attempt is a `webhook_sent` or `webhook_failed` row of the lead's trace, committed with its outcome.
 */
@Injectable()
export class WebhookDeliverer {
  private readonly logger = new Logger('Webhooks');

  constructor(
    @Inject(SERVER_CONFIG) private readonly config: ServerConfig,
    private readonly repo: WebhookDeliveriesRepository,
    private readonly events: LeadEventsRepository,
    private readonly transactor: Transactor,
    private readonly exports: ExportService,
    private readonly sender: WebhookSender,
    private readonly alerts: WebhookAlerts,
    private readonly clock: Clock,
    private readonly metrics: Metrics,
  ) {}

  /** Every endpoint's due deliveries; true when some endpoint had more than one pass takes. */
  async deliverDue(stopped: () => boolean): Promise<boolean> {
    const more = await Promise.all(this.config.webhooks.map((endpoint) => this.deliverTo(endpoint, stopped)));
    return more.some(Boolean);
  }

  private async deliverTo(endpoint: WebhookEndpoint, stopped: () => boolean): Promise<boolean> {
    for (let round = 0; round < ROUNDS; round += 1) {
      if (stopped()) return false;
      // Read again after each batch: a delivered event lets its lead's next one go in this very pass.
      const due = await this.repo.dueDeliveries(endpoint.url, this.clock.now(), BATCH);
      if (due.length === 0) return false;
      for (const delivery of due) {
        if (stopped()) return false;
        // No answer in time, or no connection: the URL is down, and each further try would hold this pass (and the
        // other URLs' next events) up to 10 s more. Its other deliveries wait for the next pass.
        if ((await this.attempt(endpoint, delivery)) === 'unreachable') return false;
      }
    }
    return true;
  }

  private async attempt(endpoint: WebhookEndpoint, d: DueDelivery): Promise<'delivered' | 'refused' | 'unreachable'> {
    const body = await this.body(d);
    const t = Math.floor(this.clock.now() / 1000);
    const answer = await this.sender.post(endpoint.url, body, {
      [SIGNATURE_HEADER]: signatureHeader(endpoint.secret, t, body),
      'Stickers-Event-Id': d.public_id,
      'Stickers-Event-Type': d.type,
    });
    const now = this.clock.now();
    const attempts = d.attempts + 1;
    const origin = endpointOrigin(endpoint.url);
    const what = `${d.type} ${d.public_id}${d.replayed_at !== null ? ' (replay)' : ''} to ${origin}`;
    const log = { lead_number: d.lead_id, event_id: d.public_id, type: d.type, endpoint: origin, attempt: attempts };
    if (answer.ok) {
      await this.transactor.run(async (trx) => {
        await this.repo.markDelivered(d.id, attempts, now, trx);
        await this.events.record(d.lead_id, 'webhook_sent', now, `${what}: HTTP ${answer.status}, attempt ${attempts}`, null, trx);
      });
      this.metrics.observe('webhook_delivery_latency_seconds', (now - (d.replayed_at ?? d.at)) / 1000, { type: d.type });
      this.logger.log({ msg: 'webhook delivered', ...log, status: answer.status });
      return 'delivered';
    }
    const nextAt = now + retryDelayMs(attempts);
    const firstFailedAt = d.first_failed_at ?? now;
    const detail = `${what}: ${answer.error}, attempt ${attempts}; next attempt at ${new Date(nextAt).toISOString()}`;
    await this.transactor.run(async (trx) => {
      await this.repo.markFailed(d.id, { attempts, nextAt, firstFailedAt, error: answer.error }, trx);
      await this.events.record(d.lead_id, 'webhook_failed', now, detail, null, trx);
    });
    this.logger.warn({ msg: 'webhook attempt failed', ...log, error: answer.error, next_attempt_in_sec: (nextAt - now) / 1000 });
    if (now - firstFailedAt >= WEBHOOK_ALERT_AFTER_MS) this.alerts.failing(origin, d.type, d.lead_id, attempts, answer.error);
    return answer.answered ? 'refused' : 'unreachable';
  }

  /**
   * `{ id, type, created_at, data: { lead, …the event's own facts } }`. The lead is read now, exactly as `GET /leads`
   * shows it: a lead anonymised before its delivery goes out without its personal fields.
   */
  private async body(d: DueDelivery): Promise<string> {
    const facts = JSON.parse(d.data) as Record<string, unknown>;
    const lead = await this.leadAsListed(d.lead_id);
    return JSON.stringify({ id: d.public_id, type: d.type, created_at: new Date(d.at).toISOString(), data: { lead, ...facts } });
  }

  /** The lead as `GET /leads` lists it: the page that starts right above its number, one lead long. */
  private async leadAsListed(leadId: number): Promise<ExportedLead | null> {
    const page = await this.exports.page({ cursor: this.exports.cursorAbove(leadId + 1), limit: '1' });
    const lead = page.leads[0];
    return lead?.lead_number === leadId ? lead : null;
  }
}
