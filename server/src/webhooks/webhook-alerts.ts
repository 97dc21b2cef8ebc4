import { Inject, Injectable } from '@nestjs/common';
import { AlertsService } from '../alerts/alerts.service';
import { PUBLISH_ALERT_INTERVAL_MS } from '../outbox/retry-schedule';
import { MESSAGES } from '../i18n/i18n.module';
import type { Messages } from '../i18n';

/** A delivery that has failed for this long raises the admin alert (docs/requirements.md §14.8). */
export const WEBHOOK_ALERT_AFTER_MS = 30 * 60_000;

/** The webhooks' admin alert: its text, key and throttle (the outbox's: once per 30 minutes, whichever delivery). */
@Injectable()
export class WebhookAlerts {
  constructor(
    private readonly alerts: AlertsService,
    @Inject(MESSAGES) private readonly t: Messages,
  ) {}

  /** Never awaited by a pass: an alert must not delay deliveries. */
  failing(endpoint: string, type: string, leadId: number, attempts: number, error: string): void {
    void this.alerts.sendThrottled(
      'webhook_failing',
      PUBLISH_ALERT_INTERVAL_MS,
      this.t.alerts.webhookFailing(endpoint, type, leadId, attempts, error),
    );
  }
}

/** Scheme, host and port of an endpoint: what logs, the trace and alerts name (its path or query may hold a token). */
export function endpointOrigin(url: string): string {
  return new URL(url).origin;
}
