import { Injectable } from '@nestjs/common';
import { AlertsService } from '../alerts/alerts.service';
import { PUBLISH_ALERT_INTERVAL_MS } from '../outbox/retry-schedule';

/** A delivery that has failed for this long raises the admin alert (docs/requirements.md §14.8). */
export const WEBHOOK_ALERT_AFTER_MS = 30 * 60_000;

/** The webhooks' admin alert: its text, key and throttle (the outbox's: once per 30 minutes, whichever delivery). */
@Injectable()
export class WebhookAlerts {
  constructor(private readonly alerts: AlertsService) {}

  /** Never awaited by a pass: an alert must not delay deliveries. */
  failing(endpoint: string, type: string, leadId: number, attempts: number, error: string): void {
    void this.alerts.sendThrottled(
      'webhook_failing',
      PUBLISH_ALERT_INTERVAL_MS,
      `🚨 Вебхук не доставляется больше 30 мин: ${endpoint}, событие ${type} заявки #${leadId}, попыток: ${attempts}, ` +
        `последняя ошибка: ${error}. История: trace #${leadId}.`,
    );
  }
}

/** Scheme, host and port of an endpoint: what logs, the trace and alerts name (its path or query may hold a token). */
export function endpointOrigin(url: string): string {
  return new URL(url).origin;
}
