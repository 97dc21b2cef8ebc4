import { createHmac } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { Clock } from '../clock/clock';
import { SERVER_CONFIG } from '../config/config.module';
import type { ServerConfig } from '../config/config';
import { ExportService } from '../export/export.service';
import { Metrics } from '../observability/metrics';
import { LeadsRepository } from '../repositories/leads.repository';
import type { OutboxRow } from '../repositories/outbox.repository';
import { WebhookEventsRepository } from '../repositories/webhook-events.repository';
import type { Outcome, OutboxHandler } from '../outbox/outcome';
import { endpointOrigin, postWebhook, SIGNATURE_HEADER, WEBHOOK_TIMEOUT, type WebhookTimeout } from './webhook.sender';
import { AlertsService } from '../alerts/alerts.service';
import { PUBLISH_ALERT_INTERVAL_MS, retryDelayMs } from '../outbox/retry-schedule';
import { MESSAGES } from '../i18n/i18n.module';
import type { Messages } from '../i18n';

/** `t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>`, one `v1=` per secret (the current one first). */
function signatureHeader(secrets: (string | undefined)[], unixSeconds: number, body: string): string {
  const v1s = secrets
    .filter((s) => s !== undefined)
    .map((secret) => `v1=${createHmac('sha256', secret).update(`${unixSeconds}.${body}`).digest('hex')}`);
  return [`t=${unixSeconds}`, ...v1s].join(',');
}

/** A delivery failing this long raises the admin alert (docs/requirements.md §14.8), throttled as the cards' one. */
const ALERT_AFTER_MS = 30 * 60_000;

/** `webhook` rows: a 2xx is success, anything else a failure on the cards' schedule (forever), traced each time. */
@Injectable()
export class WebhookDeliverer implements OutboxHandler {
  private readonly logger = new Logger('Webhooks');

  constructor(
    @Inject(SERVER_CONFIG) private readonly config: ServerConfig,
    private readonly repo: WebhookEventsRepository,
    private readonly events: LeadsRepository,
    private readonly exports: ExportService,
    @Inject(WEBHOOK_TIMEOUT) private readonly timeout: WebhookTimeout,
    private readonly alerts: AlertsService,
    private readonly clock: Clock,
    private readonly metrics: Metrics,
    @Inject(MESSAGES) private readonly t: Messages,
  ) {}

  async handle(row: OutboxRow): Promise<Outcome> {
    const endpoint = this.config.webhooks.find((e) => e.url === row.target);
    const event = await this.repo.findEvent(row.event_id!);
    if (!endpoint || !event) return { done: 'no endpoint' };
    // `{ id, type, created_at, data: { lead, …facts } }`, the lead read now as `GET /leads` shows it (an erased one without PII).
    const data = { lead: await this.exports.lead(event.lead_id), ...(JSON.parse(event.data) as Record<string, unknown>) };
    const body = JSON.stringify({ id: event.public_id, type: event.type, created_at: new Date(event.at).toISOString(), data });
    const signature = signatureHeader([endpoint.secret, endpoint.previousSecret], Math.floor(this.clock.now() / 1000), body);
    const headers = { [SIGNATURE_HEADER]: signature, 'Stickers-Event-Id': event.public_id, 'Stickers-Event-Type': event.type };
    const answer = await postWebhook(endpoint.url, body, headers, this.timeout.ms);
    const now = this.clock.now();
    const attempts = row.attempts + 1;
    const origin = endpointOrigin(endpoint.url);
    const what = `${event.type} ${event.public_id}${row.replayed_at !== null ? ' (replay)' : ''} to ${origin}`;
    const log = { lead_number: row.lead_id, event_id: event.public_id, type: event.type, endpoint: origin, attempt: attempts };
    if (answer.ok) {
      const record = async () => {
        await this.events.recordEvent(row.lead_id, 'webhook_sent', now, `${what}: HTTP ${answer.status}, attempt ${attempts}`);
        this.metrics.observe('webhook_delivery_latency_seconds', (now - (row.replayed_at ?? event.at)) / 1000, { type: event.type });
        this.logger.log({ msg: 'webhook delivered', ...log, status: answer.status });
      };
      return { done: 'delivered', attempts, record };
    }
    const nextAt = now + retryDelayMs(attempts);
    const firstFailedAt = row.first_failed_at ?? now;
    const detail = `${what}: ${answer.error}, attempt ${attempts}; next attempt at ${new Date(nextAt).toISOString()}`;
    const record = async () => {
      await this.events.recordEvent(row.lead_id, 'webhook_failed', now, detail);
      this.logger.warn({ msg: 'webhook attempt failed', ...log, error: answer.error, next_attempt_in_sec: (nextAt - now) / 1000 });
      if (now - firstFailedAt >= ALERT_AFTER_MS) {
        const text = this.t.alerts.webhookFailing(origin, event.type, row.lead_id, attempts, answer.error);
        void this.alerts.sendThrottled('webhook_failing', PUBLISH_ALERT_INTERVAL_MS, text);
      }
    };
    // No answer in time, or no connection: the URL is down, and each further try would wait as long again.
    return { failed: { attempts, nextAt, error: answer.error, firstFailedAt }, record, stop: !answer.answered };
  }
}
