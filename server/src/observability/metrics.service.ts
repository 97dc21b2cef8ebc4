import { Injectable } from '@nestjs/common';
import { Clock } from '../clock/clock';
import { LeadsRepository } from '../repositories/leads.repository';
import { Metrics } from './metrics';

/** `GET /metrics`: the in-process counters, and the outbox gauges read from the database at scrape time. */
@Injectable()
export class MetricsService {
  constructor(
    private readonly metrics: Metrics,
    private readonly leads: LeadsRepository,
    private readonly clock: Clock,
  ) {}

  async render(): Promise<string> {
    const pending = await this.leads.countUnpublished();
    const oldest = await this.leads.oldestUnpublishedAt();
    const age = oldest === null ? 0 : Math.max(0, (this.clock.now() - oldest) / 1000);
    return this.metrics.render({
      outbox_pending: ['Leads without a card', pending],
      outbox_oldest_age_seconds: ['Age of the oldest lead without a card', age],
    });
  }
}
