import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { Server } from 'node:http';
import { performance } from 'node:perf_hooks';
import { Injectable, type OnApplicationBootstrap, type OnApplicationShutdown, Optional } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';

type Labels = Record<string, string>;

/** The counters: name → help and the label names a sample may carry (any subset of them). */
const COUNTERS = {
  leads_submissions_total: ['POST /leads answers by result', ['result', 'why', 'reason']],
  outbox_publish_attempts_total: ['Card sends tried', []],
  outbox_published_total: ['Cards published', []],
  outbox_publish_failures_total: ['Card sends that failed (flood control not counted)', []],
  telegram_flood_total: ['Telegram 429 answers (flood control)', []],
  outbox_attempt_failures_total: ['Outbox attempts that failed and wait for their next time, by kind', ['kind']],
  alerts_sent_total: ['Admin alerts sent, by kind', ['kind']],
} as const satisfies Record<string, readonly [string, readonly string[]]>;
type CounterName = keyof typeof COUNTERS;

/** Latencies of minutes and hours: a card or a webhook waits out Telegram's flood control or an endpoint that is down. */
const LATENCY_BUCKETS = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, 21600];

/** The histograms: name → help, label names, buckets. */
const HISTOGRAMS = {
  leads_submit_duration_seconds: [
    'POST /leads: from the request (its headers read) to the answer, by outcome',
    ['outcome'],
    [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  ],
  outbox_card_latency_seconds: ['From a lead accepted (its arrival) to its first card in the group', [], LATENCY_BUCKETS],
  webhook_delivery_latency_seconds: [
    "From a webhook event's time to its delivery (the endpoint's 2xx), by event type",
    ['type'],
    LATENCY_BUCKETS,
  ],
} as const satisfies Record<string, readonly [string, readonly string[], readonly number[]]>;
type HistogramName = keyof typeof HISTOGRAMS;

/** Node publishes every request its HTTP servers read on this channel, just before the server's request listeners run. */
const REQUEST_START = 'http.server.request.start';

/** The labels with their names sorted: the text format lists them in one order whatever the caller wrote. */
const sorted = (labels: Labels): Labels => Object.fromEntries(Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : 1)));

/**
 * The app's metrics in a Registry of its own (several apps in one process keep apart). `POST /leads` is timed from when
 * Node reads the request (diagnostics channel: AsyncLocalStorage's hooks would cost every request).
 */
@Injectable()
export class Metrics implements OnApplicationBootstrap, OnApplicationShutdown {
  readonly registry = new Registry();
  /** When Node read each request of this app's server not yet answered with a submission sample. */
  private readonly started = new WeakMap<object, number>();
  private server: Server | undefined;

  constructor(@Optional() private readonly adapterHost?: HttpAdapterHost) {
    // Each registers itself in the registry, where inc and observe find it by name.
    for (const [name, [help, labelNames]] of Object.entries(COUNTERS)) new Counter({ name, help, labelNames, registers: [this.registry] });
    for (const [name, [help, labelNames, buckets]] of Object.entries(HISTOGRAMS))
      new Histogram({ name, help, labelNames: [...labelNames], buckets: [...buckets], registers: [this.registry] });
    collectDefaultMetrics({ register: this.registry });
  }

  private readonly onRequest = (message: unknown): void => {
    const { server, request } = message as { server?: unknown; request?: object };
    if (server !== this.server || !request) return;
    this.started.set(request, performance.now());
  };

  onApplicationBootstrap(): void {
    this.server = this.adapterHost?.httpAdapter?.getHttpServer() as Server | undefined;
    if (this.server) subscribe(REQUEST_START, this.onRequest);
  }

  onApplicationShutdown(): void {
    if (this.server) unsubscribe(REQUEST_START, this.onRequest);
  }

  inc(name: CounterName, labels: Labels = {}, by = 1): void {
    const counter = this.registry.getSingleMetric(name) as Counter | undefined;
    if (!counter) throw new Error(`unknown counter ${name}`);
    counter.inc(sorted(labels), by);
  }

  /** A `POST /leads` answer: counted, and its time since arrival observed once per request. */
  submission(request: object, labels: Labels): void {
    this.inc('leads_submissions_total', labels);
    const startedAt = this.started.get(request);
    if (startedAt === undefined) return;
    this.started.delete(request);
    const outcome =
      labels.result === 'rejected' ? (labels.reason ?? 'rejected') : labels.result === 'throttled' ? 'limited' : labels.result;
    this.observe('leads_submit_duration_seconds', (performance.now() - startedAt) / 1000, { outcome: outcome ?? 'unknown' });
  }

  /** A histogram sample, in seconds. */
  observe(name: HistogramName, seconds: number, labels: Labels = {}): void {
    (this.registry.getSingleMetric(name) as Histogram | undefined)?.observe(labels, Math.max(0, seconds));
  }
}
