import { Injectable } from '@nestjs/common';
import { Gauge } from 'prom-client';
import { Clock } from '../clock/clock';
import { LeadsRepository } from '../repositories/leads.repository';
import { OutboxRepository } from '../repositories/outbox.repository';
import { OUTBOX_KINDS } from '../database/schema';
import { Metrics } from './metrics';

/** `GET /metrics`: the app's registry with the outbox gauges, which read the database at each scrape. */
@Injectable()
export class MetricsService {
  constructor(
    private readonly metrics: Metrics,
    leads: LeadsRepository,
    outbox: OutboxRepository,
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
    // The outbox's backlog by kind: rows waiting, and of those the ones that failed at least once (one read for both).
    let backlog: ReturnType<typeof outbox.backlog> | null = null;
    const read = () => (backlog ??= outbox.backlog().finally(() => setImmediate(() => (backlog = null))));
    for (const [name, help, field] of [
      ['outbox_waiting', 'Outbox rows not done yet, by kind', 'waiting'],
      ['outbox_failing', 'Outbox rows not done that failed at least once, by kind', 'failing'],
    ] as const) {
      new Gauge({
        name,
        help,
        labelNames: ['kind'],
        registers,
        async collect() {
          const rows = await read();
          for (const kind of OUTBOX_KINDS) this.set({ kind }, rows.find((r) => r.kind === kind)?.[field] ?? 0);
        },
      });
    }
  }

  /** The Prometheus text format, and its content type. */
  get contentType(): string {
    return this.metrics.registry.contentType;
  }

  render(): Promise<string> {
    return this.metrics.registry.metrics();
  }
}
