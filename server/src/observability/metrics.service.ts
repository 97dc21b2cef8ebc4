import { Injectable } from '@nestjs/common';
import { Gauge } from 'prom-client';
import { Clock } from '../clock/clock';
import { LeadsRepository } from '../repositories/leads.repository';
import { OutboxRepository } from '../repositories/outbox.repository';
import { OUTBOX_KINDS } from '../database/schema';
import { Metrics } from './metrics';

/**
 * `GET /metrics`: the app's registry with the outbox gauges, which read the database at each scrape. A gauge whose read
 * fails (the database is down) is NaN for that scrape: the counters, the histograms and the process's own metrics are
 * still served, so `result="unavailable"` is seen while the database is away.
 */
@Injectable()
export class MetricsService {
  constructor(
    private readonly metrics: Metrics,
    leads: LeadsRepository,
    outbox: OutboxRepository,
    clock: Clock,
  ) {
    const gauge = (name: string, help: string, labelNames: string[], fill: (gauge: Gauge) => Promise<void>) =>
      new Gauge({
        name,
        help,
        labelNames,
        registers: [metrics.registry],
        async collect() {
          await fill(this).catch(() => {
            if (labelNames.length === 0) this.set(NaN);
            else for (const kind of OUTBOX_KINDS) this.set({ kind }, NaN);
          });
        },
      });
    gauge('outbox_pending', 'Leads without a card', [], async (g) => g.set(await leads.countUnpublished()));
    gauge('outbox_oldest_age_seconds', 'Age of the oldest lead without a card (from its arrival)', [], async (g) => {
      const oldest = await leads.oldestUnpublishedAt();
      g.set(oldest === null ? 0 : Math.max(0, (clock.now() - oldest) / 1000));
    });
    // The outbox's backlog by kind: rows waiting, and of those the ones that failed at least once (one read for both).
    let backlog: ReturnType<typeof outbox.backlog> | null = null;
    const read = () => (backlog ??= outbox.backlog().finally(() => setImmediate(() => (backlog = null))));
    for (const [name, help, field] of [
      ['outbox_waiting', 'Outbox rows not done yet, by kind', 'waiting'],
      ['outbox_failing', 'Outbox rows not done that failed at least once, by kind', 'failing'],
    ] as const) {
      gauge(name, help, ['kind'], async (g) => {
        const rows = await read();
        for (const kind of OUTBOX_KINDS) g.set({ kind }, rows.find((r) => r.kind === kind)?.[field] ?? 0);
      });
    }
  }

  get contentType(): string {
    return this.metrics.registry.contentType;
  }

  render(): Promise<string> {
    return this.metrics.registry.metrics();
  }
}
