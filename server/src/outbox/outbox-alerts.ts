import { Inject, Injectable } from '@nestjs/common';
import { AlertsService } from '../alerts/alerts.service';
import { MINIMAL_CARD_ALERT_INTERVAL_MS, PUBLISH_ALERT_INTERVAL_MS } from './retry-schedule';
import { MESSAGES } from '../i18n/i18n.module';
import type { Messages } from '../i18n';

/** The outbox's admin alerts (docs/requirements.md §9): their texts, keys and throttles. Never awaited by a pass. */
@Injectable()
export class OutboxAlerts {
  constructor(
    private readonly alerts: AlertsService,
    @Inject(MESSAGES) private readonly t: Messages,
  ) {}

  /** Cards keep failing (§4.2): one alert per 30 minutes whichever lead it is. */
  publishFailing(leadId: number, attempts: number, error: string): void {
    void this.alerts.sendThrottled('publish_failing', PUBLISH_ALERT_INTERVAL_MS, this.t.alerts.publishFailing(leadId, attempts, error));
  }

  /** §4.4: the card went out as plain text. */
  plainCard(leadId: number, refused: string): void {
    void this.alerts.sendThrottled(`card_plain:${leadId}`, PUBLISH_ALERT_INTERVAL_MS, this.t.alerts.plainCard(leadId, refused));
  }

  /** §12.5: one alert per lead, whether the minimal card replaced it at publication or at a later rewrite. */
  minimalCard(leadId: number, refused: string): void {
    void this.alerts.sendThrottled(`card_minimal:${leadId}`, MINIMAL_CARD_ALERT_INTERVAL_MS, this.t.alerts.minimalCard(leadId, refused));
  }
}
