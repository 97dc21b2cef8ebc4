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
import { WEBHOOK_TIMEOUT, type WebhookTimeout } from './webhook.sender';

/** Signed webhooks (docs/api.md "Webhooks"): recorded and delivered by the outbox's runner. */
@Module({
  imports: [RepositoriesModule, AlertsModule, ExportModule, MetricsModule, AccessModule],
  controllers: [WebhookEventsController],
  providers: [
    WebhookRecorder,
    WebhookDeliverer,
    WebhookEventsService,
    // 10 s; a fresh object per app: a test shortens its own app's timeout without touching another's.
    { provide: WEBHOOK_TIMEOUT, useFactory: (): WebhookTimeout => ({ ms: 10_000 }) },
  ],
  exports: [WebhookRecorder, WebhookDeliverer],
})
export class WebhooksModule {}
