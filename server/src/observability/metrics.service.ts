import { Injectable } from '@nestjs/common';
import { Gauge } from 'prom-client';
import { Clock } from '../clock/clock';
import { LeadsRepository } from '../repositories/leads.repository';
import { Metrics } from './metrics';

/**
 * `GET /metrics`: the app's registry (Metrics), with the outbox gauges added here, where the repository is: prom-client
 * runs their `collect` at each scrape, so they read the database then, as /ready does.
 */
@Injectable()
export class MetricsService {
  constructor(
    private readonly metrics: Metrics,
    leads: LeadsRepository,
    clock: Clock,
  ) {
    const registers = [metrics.registry];
    new Gauge({
      name: 'outbox_pending',
      help: 'Leads without a card',
      registers,
      async collect() {
        this.set(await leads.countUnpublished());
      },
    });
    new Gauge({
      name: 'outbox_oldest_age_seconds',
      help: 'Age of the oldest lead without a card (from its arrival)',
      registers,
      async collect() {
        const oldest = await leads.oldestUnpublishedAt();
        this.set(oldest === null ? 0 : Math.max(0, (clock.now() - oldest) / 1000));
      },
    });
  }

  /** The Prometheus text format, and its content type. */
  get contentType(): string {
    return this.metrics.registry.contentType;
  }

  render(): Promise<string> {
    return this.metrics.render();
  }
}
