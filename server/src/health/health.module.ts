import { type BeforeApplicationShutdown, Logger, Module } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { Server } from 'node:http';
import { RepositoriesModule } from '../repositories/repositories.module';
import { TelegramModule } from '../telegram/telegram.module';
import { MetricsModule } from '../observability/metrics.module';
import { MetricsService } from '../observability/metrics.service';
import { HealthController } from './health.controller';
import { OpenApiDocument } from './openapi';
import { ReadinessService } from './readiness.service';

const DRAIN_MS = 10_000;

/**
 * The ops doors (health, readiness, metrics, the API document) and the graceful shutdown: at SIGTERM no new connections,
 * the requests in flight finish before the database closes (an acknowledged lead is committed).
 */
@Module({
  imports: [RepositoriesModule, MetricsModule, TelegramModule],
  controllers: [HealthController],
  providers: [ReadinessService, MetricsService, OpenApiDocument],
})
export class HealthModule implements BeforeApplicationShutdown {
  private readonly logger = new Logger('Shutdown');

  constructor(private readonly adapterHost: HttpAdapterHost) {}

  async beforeApplicationShutdown(signal?: string): Promise<void> {
    const server = this.adapterHost.httpAdapter?.getHttpServer() as Server | undefined;
    if (!server?.listening) return;
    this.logger.log({ msg: 'shutting down: no new connections, draining requests in flight', signal: signal ?? 'close' });
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        server.closeAllConnections();
        resolve();
      }, DRAIN_MS);
      timer.unref();
      server.close(() => {
        clearTimeout(timer);
        resolve();
      });
      // Idle keep-alive connections would hold close() open; a busy one closes as soon as its answer is written.
      server.closeIdleConnections();
      server.keepAliveTimeout = 1;
    });
  }
}
