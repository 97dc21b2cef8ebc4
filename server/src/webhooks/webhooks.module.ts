import { Module } from '@nestjs/common';
import { AlertsModule } from '../alerts/alerts.module';
import { ExportModule } from '../export/export.module';
import { AccessModule } from '../access/access.module';
import { MetricsModule } from '../observability/metrics.module';
import { RepositoriesModule } from '../repositories/repositories.module';
import { WebhookDeliverer } from './webhook-deliverer';
import { WebhookEventsController } from './webhook-events.controller';
import { WebhookEventsService } from './webhook-events.service';
import { WebhookRecorder } from './webhook-recorder';
import { DEFAULT_WEBHOOK_TIMEOUT_MS, WEBHOOK_TIMEOUT, type WebhookTimeout } from './webhook.sender';

/**
 * Signed webhooks (docs/api.md "Webhooks", docs/requirements.md §14.8): the recorder that turns stored changes into
 * events and their delivery rows, and the deliverer the outbox's runner sends those rows with. ExportModule lends the
 * lead as `GET /leads` shows it. `GET /webhooks/events` and its redelivery sit behind the shared secret AccessModule lends.
 */
@Module({
  imports: [RepositoriesModule, AlertsModule, ExportModule, MetricsModule, AccessModule],
  controllers: [WebhookEventsController],
  providers: [
    WebhookRecorder,
    WebhookDeliverer,
    WebhookEventsService,
    // A fresh object per app: a test shortens its own app's timeout without touching another's.
    { provide: WEBHOOK_TIMEOUT, useFactory: (): WebhookTimeout => ({ ms: DEFAULT_WEBHOOK_TIMEOUT_MS }) },
  ],
  exports: [WebhookRecorder, WebhookDeliverer],
})
export class WebhooksModule {}
