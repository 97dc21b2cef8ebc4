import { Module } from '@nestjs/common';
import { AlertsModule } from '../alerts/alerts.module';
import { ClusterModule } from '../cluster/cluster.module';
import { ExportModule } from '../export/export.module';
import { MetricsModule } from '../observability/metrics.module';
import { RepositoriesModule } from '../repositories/repositories.module';
import { WebhookAlerts } from './webhook-alerts';
import { WebhookDeliverer } from './webhook-deliverer';
import { WebhookRecorder } from './webhook-recorder';
import { DEFAULT_WEBHOOK_TIMEOUT_MS, WEBHOOK_TIMEOUT, WebhookSender, type WebhookTimeout } from './webhook.sender';
import { WebhooksScheduler } from './webhooks.scheduler';
import { WebhooksService } from './webhooks.service';

/**
 * Signed webhooks (docs/api.md "Webhooks", docs/requirements.md §14.8). Hears the other features through
 * their Nest events (lead.accepted, lead.status_changed, lead.anonymised) and reads their stored changes; none of them
 * imports this module. ExportModule lends the lead as `GET /leads` shows it.
 */
@Module({
  imports: [RepositoriesModule, ClusterModule, AlertsModule, ExportModule, MetricsModule],
  providers: [
    WebhooksService,
    WebhooksScheduler,
    WebhookRecorder,
    WebhookDeliverer,
    WebhookSender,
    WebhookAlerts,
    // A fresh object per app: a test shortens its own app's timeout without touching another's.
    { provide: WEBHOOK_TIMEOUT, useFactory: (): WebhookTimeout => ({ ms: DEFAULT_WEBHOOK_TIMEOUT_MS }) },
  ],
  exports: [WebhooksService],
})
export class WebhooksModule {}
