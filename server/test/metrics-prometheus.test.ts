/**
 * GET /metrics on prom-client: real traffic through the real app (HTTP on loopback, the Telegram sandbox, a webhook
 * receiver started here), then the Prometheus text scraped and parsed. Latencies of cards and webhooks are the
 * FakeClock's, so which bucket a sample falls in is decided by moving the clock, never by how fast the machine is.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Metrics } from '../src/observability/metrics';
import { OutboxService } from '../src/outbox/outbox.service';
import { LeadsRepository } from '../src/repositories/leads.repository';
import { OutboxRepository } from '../src/repositories/outbox.repository';
import {
  FakeClock,
  LEADS_CHAT,
  NO_RATE_LIMITS,
  lead,
  postLead,
  sandboxSuite,
  startServer,
  type BootOptions,
  type TestServer,
} from './harness';

const SEC = 1000;
const suite = sandboxSuite();
const { tmp, sandbox } = suite;
let clock: FakeClock;
let n = 0;

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The samples of a Prometheus text exposition (comments skipped), label values unescaped. */
function parse(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g))
      labels[l[1]] = l[2].replace(/\\n/g, '\n').replace(/\\"/g, '"').replace(/\\\\/g, '\\');
    samples.push({ name: m[1], labels, value: m[3] === '+Inf' ? Infinity : Number(m[3]) });
  }
  return samples;
}

interface Scrape {
  text: string;
  contentType: string | null;
  samples: Sample[];
  /** The value of the one sample with exactly these labels (undefined: none). */
  value(name: string, labels?: Record<string, string>): number | undefined;
  /** The sum over every sample of `name` whose labels include `labels`. */
  sum(name: string, labels?: Record<string, string>): number;
}

async function scrape(server: { url: string }): Promise<Scrape> {
  const res = await fetch(`${server.url}/metrics`);
  expect(res.status).toBe(200);
  const text = await res.text();
  const samples = parse(text);
  const has = (s: Sample, labels: Record<string, string>) => Object.entries(labels).every(([k, v]) => s.labels[k] === v);
  return {
    text,
    contentType: res.headers.get('content-type'),
    samples,
    value: (name, labels = {}) =>
      samples.find((s) => s.name === name && Object.keys(s.labels).length === Object.keys(labels).length && has(s, labels))?.value,
    sum: (name, labels = {}) => samples.filter((s) => s.name === name && has(s, labels)).reduce((a, s) => a + s.value, 0),
  };
}

beforeEach(() => {
  clock = new FakeClock();
});

const boot = (options: BootOptions = {}): Promise<TestServer> => suite.boot({ clock, ...options });

describe('GET /metrics (prom-client)', () => {
  it('times every POST /leads answer by outcome, in a registry of its own app; the old counters and process metrics stay', async () => {
    const server = await boot({ env: { LEADS_IP_LIMIT: '1' } });
    const first = lead({ client_ip: '203.0.113.1' });
    expect((await postLead(server, first)).status).toBe(201);
    expect((await postLead(server, first)).status).toBe(200); // duplicate: the same request_id
    expect((await postLead(server, lead({ client_ip: '203.0.113.1' }))).status).toBe(429); // limited: the visitor's second
    expect((await postLead(server, lead({ client_ip: '203.0.113.2', phone: first.phone }))).body.repeat).toBe(true);
    expect((await postLead(server, { name: 'x' })).status).toBe(422);
    expect((await postLead(server, '[]')).status).toBe(422);
    expect((await postLead(server, lead(), { 'X-Stickers-Leads-Secret': 'wrong' })).status).toBe(401);
    // At once, so their handling interleaves: each answer is still timed once, under its own outcome.
    const burst = await Promise.all(Array.from({ length: 8 }, (_, i) => postLead(server, lead({ client_ip: `203.0.113.${10 + i}` }))));
    expect(burst.map((r) => r.status)).toEqual(Array(8).fill(201));

    // A second app in the same process keeps its own registry: its traffic is not in the first one's figures.
    const other = await startServer({ dbPath: join(tmp.dir, `metrics-${++n}`, 'leads.sqlite'), clock, env: NO_RATE_LIMITS });
    try {
      expect((await postLead(other, lead())).status).toBe(201);
      const o = await scrape(other);
      expect(o.value('leads_submit_duration_seconds_count', { outcome: 'created' })).toBe(1);
      expect(o.sum('leads_submit_duration_seconds_count')).toBe(1);
    } finally {
      await other.close();
    }
    await server.outbox.whenIdle();

    const m = await scrape(server);
    // prom-client's text format (Express orders the parameters its own way).
    const params = (type: string | null) =>
      (type ?? '')
        .split(';')
        .map((p) => p.trim())
        .sort();
    expect(params(m.contentType)).toEqual(params(server.app.get(Metrics).registry.contentType));
    expect(params(m.contentType)).toEqual(['charset=utf-8', 'text/plain', 'version=0.0.4']);
    const expected: Record<string, number> = {
      created: 9,
      duplicate: 1,
      repeat: 1,
      limited: 1,
      invalid: 1,
      invalid_body: 1,
      unauthorized: 1,
    };
    for (const [outcome, count] of Object.entries(expected)) {
      expect([outcome, m.value('leads_submit_duration_seconds_count', { outcome })]).toEqual([outcome, count]);
      expect(m.value('leads_submit_duration_seconds_bucket', { outcome, le: '+Inf' })).toBe(count);
      // Buckets are cumulative: never fewer at a larger bound.
      const buckets = m.samples.filter((s) => s.name === 'leads_submit_duration_seconds_bucket' && s.labels.outcome === outcome);
      expect(buckets.map((b) => b.value)).toEqual([...buckets.map((b) => b.value)].sort((a, b) => a - b));
    }
    // Only POST /leads answers are timed (the scrapes and the other app's lead are not), as many as it counted.
    expect(m.sum('leads_submit_duration_seconds_count')).toBe(15);
    expect(m.sum('leads_submissions_total')).toBe(15);

    // The names and labels of before.
    expect(m.value('leads_submissions_total', { result: 'created' })).toBe(9);
    expect(m.value('leads_submissions_total', { result: 'throttled', why: 'visitor' })).toBe(1);
    expect(m.value('leads_submissions_total', { result: 'rejected', reason: 'invalid' })).toBe(1);
    expect(m.text).toMatch(/^leads_submissions_total\{reason="invalid_body",result="rejected"\} 1$/m);
    // Every lead has its card or waits for one (a pass may leave some to the next); each card is in the latency.
    const published = m.value('outbox_published_total') ?? 0;
    expect(published).toBeGreaterThan(0);
    expect(published + (m.value('outbox_pending') ?? NaN)).toBe(9); // the 9 created (the repeat is on the first)
    expect(m.value('outbox_card_latency_seconds_count')).toBe(published);
    for (const name of [
      'outbox_publish_attempts_total',
      'outbox_publish_failures_total',
      'telegram_flood_total',
      'outbox_oldest_age_seconds',
    ])
      expect([name, typeof m.value(name)]).toEqual([name, 'number']);
    expect(m.text).toContain('# TYPE leads_submissions_total counter');
    expect(m.text).toContain('# TYPE alerts_sent_total counter');

    // Node's process metrics (collectDefaultMetrics).
    expect(m.value('process_cpu_user_seconds_total')).toBeGreaterThan(0);
    expect(m.value('nodejs_heap_size_used_bytes')).toBeGreaterThan(0);
    expect(m.value('nodejs_eventloop_lag_seconds')).toBeDefined();
    expect(m.text).toContain('# TYPE nodejs_gc_duration_seconds histogram');
  });

  it('outbox depth and age are read at each scrape; a card held back by flood control shows in the card latency', async () => {
    const server = await boot();
    sandbox.inject({ method: 'sendMessage', kind: 'retry_after', retry_after: 3, chat_id: LEADS_CHAT });
    expect((await postLead(server, lead())).status).toBe(201);
    await server.outbox.whenIdle();
    clock.advance(2 * SEC);
    expect((await postLead(server, lead())).status).toBe(201);
    await server.outbox.whenIdle();

    let m = await scrape(server);
    expect(m.value('telegram_flood_total')).toBe(1);
    expect(m.value('outbox_pending')).toBe(2);
    expect(m.value('outbox_oldest_age_seconds')).toBe(2);
    expect(m.value('outbox_card_latency_seconds_count')).toBe(0);

    clock.advance(5 * SEC);
    expect((await scrape(server)).value('outbox_oldest_age_seconds')).toBe(7);
    await server.outbox.tick();

    m = await scrape(server);
    expect(m.value('outbox_published_total')).toBe(2);
    expect(m.value('outbox_pending')).toBe(0);
    expect(m.value('outbox_oldest_age_seconds')).toBe(0);
    // Accepted at 0 s and 2 s, both cards out at 7 s: 7 s and 5 s.
    expect(m.value('outbox_card_latency_seconds_count')).toBe(2);
    expect(m.value('outbox_card_latency_seconds_sum')).toBe(12);
    expect(m.value('outbox_card_latency_seconds_bucket', { le: '2.5' })).toBe(0);
    expect(m.value('outbox_card_latency_seconds_bucket', { le: '5' })).toBe(1);
    expect(m.value('outbox_card_latency_seconds_bucket', { le: '10' })).toBe(2);
  });

  it('a database that cannot be read makes the outbox gauges NaN, and the rest of the scrape is still served', async () => {
    const server = await boot();
    expect((await postLead(server, lead())).status).toBe(201);
    await server.outbox.whenIdle();
    const down = () => Promise.reject(new Error('no connection to the database: connect ECONNREFUSED'));
    const spies = [
      jest.spyOn(server.app.get(LeadsRepository), 'countUnpublished').mockImplementation(down),
      jest.spyOn(server.app.get(LeadsRepository), 'oldestUnpublishedAt').mockImplementation(down),
      jest.spyOn(server.app.get(OutboxRepository), 'backlog').mockImplementation(down),
    ];
    try {
      const m = await scrape(server); // a 200, or the scraper sees nothing at all
      expect(m.value('leads_submissions_total', { result: 'created' })).toBe(1);
      expect(m.value('outbox_published_total')).toBe(1);
      expect(m.value('outbox_pending')).toBeNaN();
      expect(m.value('outbox_oldest_age_seconds')).toBeNaN();
      expect(m.value('outbox_waiting', { kind: 'card' })).toBeNaN();
      expect(m.value('outbox_failing', { kind: 'webhook' })).toBeNaN();
    } finally {
      for (const spy of spies) spy.mockRestore();
    }
    const m = await scrape(server);
    expect(m.value('outbox_pending')).toBe(0);
    expect(m.value('outbox_waiting', { kind: 'card' })).toBe(0);
  });

  it('webhook delivery latency: from the event to the 2xx, a retry included', async () => {
    let requests = 0;
    const receiver: Server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        requests += 1;
        res.writeHead(requests === 1 ? 500 : 200).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
      const server = await boot({ env: { LEADS_WEBHOOK_URL: url, LEADS_WEBHOOK_SECRET: 'whsec_test_0123456789abcdef' } });
      const webhooks = server.app.get(OutboxService);
      expect((await postLead(server, lead())).status).toBe(201);
      await server.outbox.whenIdle();
      await webhooks.whenIdle();
      expect(requests).toBe(1); // refused: the lead's later events wait behind it
      const failing = await scrape(server);
      expect(failing.sum('webhook_delivery_latency_seconds_count')).toBe(0);
      // The outbox per kind: the failed delivery waits (and counts as failing), nothing else does.
      expect(failing.value('outbox_attempt_failures_total', { kind: 'webhook' })).toBe(1);
      expect(failing.value('outbox_failing', { kind: 'webhook' })).toBe(1);
      expect(failing.value('outbox_waiting', { kind: 'webhook' })).toBe(1);
      expect(failing.value('outbox_failing', { kind: 'card' })).toBe(0);

      clock.advance(7 * SEC); // past the first retry (5 s)
      await webhooks.tick();
      const m = await scrape(server);
      const delivered = requests - 1;
      expect(delivered).toBeGreaterThanOrEqual(1);
      expect(m.sum('webhook_delivery_latency_seconds_count')).toBe(delivered);
      expect(m.value('webhook_delivery_latency_seconds_count', { type: 'lead.created' })).toBe(1);
      // Every event was recorded at 0 s and delivered at 7 s.
      expect(m.sum('webhook_delivery_latency_seconds_bucket', { le: '5' })).toBe(0);
      expect(m.sum('webhook_delivery_latency_seconds_bucket', { le: '10' })).toBe(delivered);
      expect(m.sum('webhook_delivery_latency_seconds_sum')).toBe(7 * delivered);
      expect(m.value('outbox_waiting', { kind: 'webhook' })).toBe(0);
      expect(m.value('outbox_failing', { kind: 'webhook' })).toBe(0);
    } finally {
      await new Promise((resolve) => receiver.close(resolve));
    }
  });
});
