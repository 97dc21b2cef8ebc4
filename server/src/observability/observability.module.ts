import { Global, Module } from '@nestjs/common';
import { OutboxModule } from '../outbox/outbox.module';
import { LeadEventsRepository } from '../trace/lead-events.repository';
import { Metrics } from './metrics';
import { ObservabilityController } from './observability.controller';
import { ReadinessService } from './readiness.service';
import { GracefulShutdown } from './graceful-shutdown';

@Global()
@Module({
  providers: [Metrics, LeadEventsRepository],
  exports: [Metrics, LeadEventsRepository],
})
export class ObservabilityCoreModule {}

@Module({ imports: [OutboxModule], controllers: [ObservabilityController], providers: [ReadinessService, GracefulShutdown] })
export class ObservabilityModule {}
