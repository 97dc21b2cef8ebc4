import { Controller, Get, Header, Res } from '@nestjs/common';
import type { Response } from 'express';
import { OutboxRepository } from '../outbox/outbox.repository';
import { Clock } from '../clock/clock';
import { Metrics } from './metrics';
import { openApiDocument } from './openapi.document';
import { ReadinessService } from './readiness.service';

/** Doors for ops and integrators: liveness, readiness, metrics, the API document. */
@Controller()
export class ObservabilityController {
  constructor(
    private readonly readiness: ReadinessService,
    private readonly metrics: Metrics,
    private readonly outbox: OutboxRepository,
    private readonly clock: Clock,
  ) {}

  @Get('health')
  health() {
    return { status: 'ok' };
  }

  @Get('ready')
  async ready(@Res() res: Response) {
    const r = await this.readiness.check();
    res.status(r.ready ? 200 : 503).json({ status: r.ready ? 'ready' : 'not_ready', checks: r.checks });
  }

  @Get('metrics')
  @Header('Content-Type', 'text/plain; version=0.0.4; charset=utf-8')
  async prometheus(): Promise<string> {
    const pending = await this.outbox.countUnpublished();
    const oldest = await this.outbox.oldestUnpublishedAt();
    const age = oldest === null ? 0 : Math.max(0, (this.clock.now() - oldest) / 1000);
    return this.metrics.render({
      outbox_pending: ['Leads without a card', pending],
      outbox_oldest_age_seconds: ['Age of the oldest lead without a card', age],
    });
  }

  @Get('openapi.json')
  openapi() {
    return openApiDocument();
  }
}
