import { Controller, Get, Res } from '@nestjs/common';
import { ApiExcludeEndpoint, ApiOkResponse, ApiOperation, ApiResponse, ApiTags, type SchemaObject } from '@nestjs/swagger';
import type { Response } from 'express';
import { jsonContent } from '../http/api-docs';
import { MetricsService } from '../observability/metrics.service';
import { objectSchema, OpenApiDocument } from './openapi';
import { ReadinessService } from './readiness.service';

const HEALTH_SCHEMA: SchemaObject = { type: 'object', required: ['status'], properties: { status: { type: 'string', enum: ['ok'] } } };

const check = (extra: Record<string, SchemaObject> = {}): SchemaObject =>
  objectSchema({
    ok: { type: 'boolean' },
    detail: { type: 'string', description: 'A fixed text (never a path or an error message): `writable`, `write failed`, …' },
    ...extra,
  });

/** `GET /ready`'s body, 200 or 503 alike. */
const READINESS_SCHEMA = objectSchema({
  status: { type: 'string', enum: ['ready', 'not_ready'] },
  checks: objectSchema({
    database: check(),
    migrations: check(),
    outbox: check({
      oldest_unpublished_age_sec: { type: 'integer', nullable: true },
      last_card_age_sec: { type: 'integer', nullable: true },
    }),
    telegram: { ...check(), description: 'Reported only: Telegram down does not make the server unready' },
  }),
});

@ApiTags('operations')
@Controller()
export class HealthController {
  constructor(
    private readonly readiness: ReadinessService,
    private readonly metrics: MetricsService,
    private readonly openApi: OpenApiDocument,
  ) {}

  @Get('health')
  @ApiOperation({ operationId: 'health', summary: 'Liveness: the process answers' })
  @ApiOkResponse({ description: 'Up', ...jsonContent(HEALTH_SCHEMA) })
  health() {
    return { status: 'ok' };
  }

  @Get('ready')
  @ApiOperation({
    operationId: 'ready',
    summary: 'Readiness: the database takes a write, migrations are current, the outbox is not stuck',
    description: 'Public and cached for a second; each check is a fixed text. Telegram is reported but does not make the server unready.',
  })
  @ApiOkResponse({ description: 'Ready', ...jsonContent(READINESS_SCHEMA) })
  @ApiResponse({ status: 503, description: 'Not ready: the failing checks have ok false', ...jsonContent(READINESS_SCHEMA) })
  async ready(@Res() res: Response) {
    const r = await this.readiness.check();
    res.status(r.ready ? 200 : 503).json({ status: r.ready ? 'ready' : 'not_ready', checks: r.checks });
  }

  @Get('metrics')
  @ApiOperation({ operationId: 'metrics', summary: 'Prometheus metrics: counts and durations, no personal data' })
  @ApiOkResponse({ description: 'The Prometheus text format', content: { 'text/plain': { schema: { type: 'string' } } } })
  async prometheus(@Res({ passthrough: true }) res: Response): Promise<string> {
    const text = await this.metrics.render();
    res.setHeader('Content-Type', this.metrics.contentType);
    return text;
  }

  /** The document itself is not one of the API's operations. */
  @Get('openapi.json')
  @ApiExcludeEndpoint()
  openapi() {
    return this.openApi.get();
  }
}
