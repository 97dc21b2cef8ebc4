import { Module } from '@nestjs/common';
import { RepositoriesModule } from '../repositories/repositories.module';
import { TelegramModule } from '../telegram/telegram.module';
import { GracefulShutdown } from './graceful-shutdown';
import { MetricsModule } from '../observability/metrics.module';
import { MetricsService } from '../observability/metrics.service';
import { HealthController } from './health.controller';
import { OpenApiDocument } from './openapi';
import { ReadinessService } from './readiness.service';

/** The ops doors (health, readiness, metrics, the API document) and the graceful shutdown. */
@Module({
  imports: [RepositoriesModule, MetricsModule, TelegramModule],
  controllers: [HealthController],
  providers: [ReadinessService, MetricsService, GracefulShutdown, OpenApiDocument],
})
export class HealthModule {}
