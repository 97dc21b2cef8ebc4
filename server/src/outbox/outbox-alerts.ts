import { Injectable } from '@nestjs/common';
import { AlertsService } from '../alerts/alerts.service';
import { MINIMAL_CARD_ALERT_INTERVAL_MS, PUBLISH_ALERT_INTERVAL_MS } from './retry-schedule';

/** The outbox's admin alerts (docs/requirements.md §9): their texts, keys and throttles. Never awaited by a pass. */
@Injectable()
export class OutboxAlerts {
  constructor(private readonly alerts: AlertsService) {}

  /** Cards keep failing (§4.2): one alert per 30 minutes whichever lead it is. */
  publishFailing(leadId: number, attempts: number, error: string): void {
    void this.alerts.sendThrottled(
      'publish_failing',
      PUBLISH_ALERT_INTERVAL_MS,
      `🚨 Карточки не публикуются: заявка #${leadId}, попыток: ${attempts}, последняя ошибка: ${error}. Список: /stickers_new`,
    );
  }

  /** §4.4: the card went out as plain text. */
  plainCard(leadId: number, refused: string): void {
    void this.alerts.sendThrottled(
      `card_plain:${leadId}`,
      PUBLISH_ALERT_INTERVAL_MS,
      `⚠️ Карточка заявки #${leadId} отправлена простым текстом: Telegram не принял HTML (${refused}).`,
    );
  }

  /** §12.5: one alert per lead, whether the minimal card replaced it at publication or at a later rewrite. */
  minimalCard(leadId: number, refused: string): void {
    void this.alerts.sendThrottled(
      `card_minimal:${leadId}`,
      MINIMAL_CARD_ALERT_INTERVAL_MS,
      `⚠️ Карточка заявки #${leadId} слишком длинная для Telegram (${refused}): в группе краткая карточка — номер, статус, кнопки. ` +
        `Данные заявки: trace #${leadId}.`,
    );
  }
}
