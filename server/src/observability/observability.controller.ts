import { Controller, Get, Res } from '@nestjs/common';
import type { Response } from 'express';
import { MetricsService } from './metrics.service';
import { openApiDocument } from './openapi.document';
import { ReadinessService } from './readiness.service';

/** Doors for ops and integrators: liveness, readiness, metrics, the API document. */
@Controller()
export class ObservabilityController {
  constructor(
    private readonly readiness: ReadinessService,
    private readonly metrics: MetricsService,
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
  async prometheus(@Res({ passthrough: true }) res: Response): Promise<string> {
    const text = await this.metrics.render();
    res.setHeader('Content-Type', this.metrics.contentType);
    return text;
  }

  @Get('openapi.json')
  openapi() {
    return openApiDocument();
  }
}
