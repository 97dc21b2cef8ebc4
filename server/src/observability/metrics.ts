import { Injectable } from '@nestjs/common';

type Labels = Record<string, string>;

const HELP: Record<string, string> = {
  leads_submissions_total: 'POST /leads answers by result',
  outbox_publish_attempts_total: 'Card sends tried',
  outbox_published_total: 'Cards published',
  outbox_publish_failures_total: 'Card sends that failed (flood control not counted)',
  telegram_flood_total: 'Telegram 429 answers (flood control)',
  alerts_sent_total: 'Admin alerts sent, by kind',
};

/** A label value as the text format quotes it (backslash, quote and newline escaped; most values have none). */
const labelValue = (v: string): string => (/[\\"\n]/.test(v) ? v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n') : v);

function key(name: string, labels: Labels): string {
  const parts = Object.keys(labels)
    .sort()
    .map((k) => `${k}="${labelValue(labels[k])}"`);
  return parts.length ? `${name}{${parts.join(',')}}` : name;
}

/**
 * In-process counters in the Prometheus text format. Small on purpose: a handful of counters needs no client
 * library. Gauges that live in the database (outbox backlog) are read at scrape time by MetricsService.
 */
@Injectable()
export class Metrics {
  private readonly counters = new Map<string, { name: string; value: number }>();

  constructor() {
    for (const name of Object.keys(HELP)) if (name !== 'leads_submissions_total' && name !== 'alerts_sent_total') this.inc(name, {}, 0);
  }

  inc(name: string, labels: Labels = {}, by = 1): void {
    const k = key(name, labels);
    const c = this.counters.get(k);
    if (c) c.value += by;
    else this.counters.set(k, { name, value: by });
  }

  value(name: string, labels: Labels = {}): number {
    return this.counters.get(key(name, labels))?.value ?? 0;
  }

  /** The counters, then `gauges` (name → [help, value]). */
  render(gauges: Record<string, [string, number]> = {}): string {
    const lines: string[] = [];
    const byName = new Map<string, string[]>();
    for (const [k, c] of this.counters) {
      const list = byName.get(c.name) ?? [];
      list.push(`${k} ${c.value}`);
      byName.set(c.name, list);
    }
    for (const [name, samples] of [...byName].sort(([a], [b]) => a.localeCompare(b))) {
      lines.push(`# HELP ${name} ${HELP[name] ?? name}`, `# TYPE ${name} counter`, ...samples.sort());
    }
    for (const [name, [help, value]] of Object.entries(gauges))
      lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} gauge`, `${name} ${value}`);
    return `${lines.join('\n')}\n`;
  }
}
