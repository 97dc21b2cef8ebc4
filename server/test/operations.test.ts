/** Run it like a product: trace, readiness, metrics, OpenAPI, structured logs. */
import { rmSync } from 'node:fs';
import { DEFAULT_USER } from '@stickers/telegram-sandbox';
import { JsonLogger } from '../src/observability/json-logger';
import { formatTrace } from '../src/trace/trace-format';
import { NO_SUCH_NUMBER, NOT_IN_DATABASE } from '../src/trace/trace.service';
import { HousekeepingService } from '../src/housekeeping/housekeeping.service';
import { AnonymisationService } from '../src/anonymisation/anonymisation.service';
import { FakeClock, LEADS_CHAT, SECRET, lead, postLead, waitFor, type BootOptions, type TestServer, sandboxSuite } from './harness';
import { itSqliteOnly } from './support/test-database';

const SEC = 1000;
const suite = sandboxSuite();
const { sandbox } = suite;
let server: TestServer;
let clock: FakeClock;

const boot = async (options: BootOptions = {}) => (server = await suite.boot({ clock, ...options }));
const get = async (path: string, headers: Record<string, string> = {}) => {
  const res = await fetch(`${server.url}${path}`, { headers });
  const text = await res.text();
  let body: any = text;
  try {
    body = JSON.parse(text);
  } catch {
    /* text */
  }
  return { status: res.status, body, headers: res.headers };
};
const trace = (key: string) => get(`/leads/${encodeURIComponent(key)}/trace`, { 'X-Stickers-Leads-Secret': SECRET });

beforeEach(() => {
  clock = new FakeClock();
});

describe('trace', () => {
  it('an unknown request_id is "not in the database: check the fallback channel"', async () => {
    await boot();
    const id = crypto.randomUUID();
    const res = await trace(id);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ found: false, key: id, message: NOT_IN_DATABASE });
    expect(formatTrace(res.body)).toContain('not in the database: check the fallback channel');
  });

  it('an unknown lead number says no lead has it, and to trace a request that never arrived by its request_id', async () => {
    await boot();
    for (const key of ['999', '#999']) {
      const res = await trace(key);
      expect([res.status, res.body]).toEqual([200, { found: false, key, message: NO_SUCH_NUMBER }]);
    }
    expect(formatTrace((await trace('999')).body)).toContain('no lead has this number');
  });

  it('needs the secret', async () => {
    await boot();
    expect((await get(`/leads/${crypto.randomUUID()}/trace`)).status).toBe(401);
  });

  it('tells the whole story: failed attempts, card, repeat and its notification, status changes, reminder, anonymisation', async () => {
    await boot({ polling: true });
    sandbox.inject({ method: 'sendMessage', kind: 'server_error', status: 502, description: 'Bad Gateway', count: 1, chat_id: LEADS_CHAT });
    const first = lead({ phone: '+79990101010' });
    const created = await postLead(server, first);
    await server.outbox.whenIdle();
    const pending = await trace(first.request_id as string);
    expect(pending.body.lead).toMatchObject({
      lead_number: created.body.lead_number,
      published_at: null,
      publish_attempts: 1,
      last_error: '502: Bad Gateway',
      next_attempt_at: clock.now() + 5 * SEC,
    });

    clock.advance(5 * SEC);
    await server.outbox.tick();
    const repeat = lead({ phone: '+79990101010', guests: '77' });
    await postLead(server, repeat);
    await server.outbox.whenIdle();
    const card = sandbox.messages(LEADS_CHAT).find((m) => m.text.startsWith(`🆕 Заявка #${created.body.lead_number}`))!;
    const answer = sandbox.press(LEADS_CHAT, card.message_id, `lead:${created.body.lead_number}:new:in_progress`);
    await waitFor(() => sandbox.state.callbackAnswers.some((a) => a.callback_query_id === answer), 5000, 'press');
    await server.app.get(AnonymisationService).forget(created.body.lead_number);
    // The erasure's card rewrite is the outbox's: the story is read once a pass has run it.
    await server.outbox.tick();

    const viaRepeat = await trace(repeat.request_id as string);
    expect(viaRepeat.body.matched).toBe('repeat');
    const story = viaRepeat.body;
    expect(story.lead).toMatchObject({
      lead_number: created.body.lead_number,
      status: 'in_progress',
      chat_id: String(LEADS_CHAT),
      message_id: card.message_id,
    });
    expect(story.lead.anonymised_at).not.toBeNull();
    expect(story.repeats).toEqual([
      // Erased, the repeat still says which fields it changed (the names are no one's data), not to what.
      expect.objectContaining({ request_id: repeat.request_id, changed_fields: ['telegram', 'guests'], notify_outcome: 'pinged' }),
    ]);
    expect(story.status_history).toEqual([
      expect.objectContaining({ from: 'new', to: 'in_progress', by: 'Мария Менеджер', user_id: DEFAULT_USER.id }),
    ]);
    expect(story.events.map((e: any) => e.kind)).toEqual([
      'publish_failed',
      'published',
      'repeat_notified',
      'card_rewritten',
      'anonymised',
      'card_rewritten',
    ]);
    expect(story.events[0].detail).toContain('attempt 1: 502: Bad Gateway');
    expect(story.events[2].repeat_request_id).toBe(repeat.request_id);

    const byNumber = await trace(`#${created.body.lead_number}`);
    expect(byNumber.body.matched).toBe('lead_number');
    const text = formatTrace(byNumber.body);
    expect(text).toContain(`lead #${created.body.lead_number}`);
    expect(text).toContain('publish_failed: attempt 1: 502: Bad Gateway');
    expect(text).toContain('new → in_progress by Мария Менеджер');
    expect(text).toMatch(/anonymised\s+\d{4}-/);
    // The trace carries no personal data.
    expect(JSON.stringify(story)).not.toContain('+79990101010');
  });

  it('records the reminder', async () => {
    await boot();
    const l = lead();
    await postLead(server, l);
    await server.outbox.whenIdle();
    clock.advance(31 * 60 * SEC);
    await server.app.get(HousekeepingService).remind();
    expect((await trace(l.request_id as string)).body.events.map((e: any) => e.kind)).toEqual(['published', 'reminded']);
  });
});

describe('health and readiness', () => {
  it('/health is up; /ready is 200 with its checks', async () => {
    await boot();
    expect(await get('/health')).toMatchObject({ status: 200, body: { status: 'ok' } });
    const ready = await get('/ready');
    expect(ready.status).toBe(200);
    expect(ready.body.checks).toMatchObject({
      database: { ok: true },
      migrations: { ok: true, detail: 'current' },
      outbox: { ok: true },
      telegram: { ok: true },
    });
  });

  it('/ready is 503 when the outbox is stuck (oldest unpublished lead older than READY_MAX_OUTBOX_AGE_SEC)', async () => {
    await boot({ env: { READY_MAX_OUTBOX_AGE_SEC: '60' } });
    sandbox.inject({ method: 'sendMessage', kind: 'server_error', count: 100, chat_id: LEADS_CHAT });
    await postLead(server, lead());
    await server.outbox.whenIdle();
    clock.advance(60 * SEC);
    expect((await get('/ready')).status).toBe(200);
    clock.advance(1 * SEC);
    const res = await get('/ready');
    expect(res.status).toBe(503);
    expect(res.body.checks.outbox).toMatchObject({ ok: false, oldest_unpublished_age_sec: 61 });
  });

  itSqliteOnly('/ready is 503 when the database file is gone (SQLite only: the database is a file)', async () => {
    await boot();
    rmSync(server.config.databasePath);
    const res = await get('/ready');
    expect(res.status).toBe(503);
    expect(res.body.checks.database.detail).toContain('is gone');
  });

  it('Telegram down is reported but does not make the server unready', async () => {
    await boot();
    sandbox.inject({ method: 'getMe', kind: 'server_error' });
    const res = await get('/ready');
    expect(res.status).toBe(200);
    expect(res.body.checks.telegram.ok).toBe(false);
  });
});

describe('metrics', () => {
  it('counters move with requests; outbox gauges read the database', async () => {
    await boot({ env: { LEADS_IP_LIMIT: '1' } });
    const value = async (sample: string) => {
      const text = (await get('/metrics')).body as string;
      const line = text.split('\n').find((l) => l.startsWith(`${sample} `));
      return line ? Number(line.split(' ')[1]) : 0;
    };
    const first = lead({ client_ip: '203.0.113.1' });
    await postLead(server, first);
    await postLead(server, first);
    await postLead(server, lead({ client_ip: '203.0.113.1' }));
    await postLead(server, lead({ client_ip: '203.0.113.2', phone: first.phone }));
    await postLead(server, { name: 'x' });
    await postLead(server, '[]');
    await postLead(server, lead(), { 'X-Stickers-Leads-Secret': 'wrong' });
    await server.outbox.whenIdle();
    expect(await value('leads_submissions_total{result="created"}')).toBe(1);
    expect(await value('leads_submissions_total{result="duplicate"}')).toBe(1);
    expect(await value('leads_submissions_total{result="repeat"}')).toBe(1);
    expect(await value('leads_submissions_total{result="throttled",why="visitor"}')).toBe(1);
    expect(await value('leads_submissions_total{reason="invalid",result="rejected"}')).toBe(1);
    expect(await value('leads_submissions_total{reason="invalid_body",result="rejected"}')).toBe(1);
    expect(await value('leads_submissions_total{result="unauthorized"}')).toBe(1);
    expect(await value('outbox_published_total')).toBe(1);
    sandbox.inject({ method: 'sendMessage', kind: 'retry_after', retry_after: 3, chat_id: LEADS_CHAT });
    await postLead(server, lead({ client_ip: '203.0.113.3' }));
    await server.outbox.whenIdle();
    expect(await value('telegram_flood_total')).toBe(1);
    expect(await value('outbox_pending')).toBe(1);
    clock.advance(2 * SEC);
    expect(await value('outbox_oldest_age_seconds')).toBe(2);
    const text = (await get('/metrics')).body as string;
    expect(text).toContain('# TYPE leads_submissions_total counter');
  });
});

describe('OpenAPI', () => {
  it('documents POST /leads with every status of requirements §1.2', async () => {
    await boot();
    const doc = (await get('/openapi.json')).body;
    const post = doc.paths['/leads'].post;
    expect(Object.keys(post.responses).sort()).toEqual(['200', '201', '401', '404', '413', '422', '429', '503']);
    expect(post.responses['503'].content['application/json'].schema.properties.error.enum).toEqual(['unavailable']);
    expect(post.responses['429'].headers['Retry-After']).toBeDefined();
    expect(post.responses['429'].content['application/json'].schema.properties.why.enum).toEqual(['secret', 'visitor', 'hourly', 'flood']);
    // The optional free-text fields come last, as shared's table of them lists them.
    expect(Object.keys(doc.components.schemas.LeadRequest.properties)).toEqual([
      'request_id',
      'name',
      'telegram',
      'phone',
      'client_ip',
      'late',
      'source',
      'captcha',
      'consent',
      'date',
      'guests',
      'comment',
    ]);
    // The replayed request's `late` object, every field described; `late` is a field a 422 can name.
    const late = doc.components.schemas.LeadRequest.properties.late;
    expect(Object.keys(late.properties)).toEqual(['submitted_at', 'route', 'reason', 'fallback']);
    expect(Object.keys(late.properties.fallback.properties)).toEqual(['chat_id', 'message_id', 'sent_at', 'sig']);
    for (const field of [late, ...Object.values(late.properties), ...Object.values(late.properties.fallback.properties)] as any[]) {
      expect(field.description).toEqual(expect.any(String));
    }
    const invalid = post.responses['422'].content['application/json'].schema.oneOf[0];
    expect(Object.keys(invalid.properties.errors.properties)).toContain('late');
    expect(doc.components.securitySchemes.leadsSecret.name).toBe('X-Stickers-Leads-Secret');
  });
});

describe('structured logs', () => {
  it('one JSON object per line with request_id and lead_number on lines about a lead; LOG_LEVEL filters', () => {
    const lines: string[] = [];
    const logger = new JsonLogger('warn', (l) => lines.push(l));
    logger.log({ msg: 'lead created', request_id: 'abc', lead_number: 7 }, 'Leads');
    logger.warn({ msg: 'publish attempt failed', request_id: 'abc', lead_number: 7, error: '502' }, 'Outbox');
    logger.error('plain text', 'Main');
    expect(lines).toHaveLength(2);
    expect(JSON.parse(lines[0])).toMatchObject({
      level: 'warn',
      context: 'Outbox',
      msg: 'publish attempt failed',
      request_id: 'abc',
      lead_number: 7,
    });
    expect(JSON.parse(lines[1])).toMatchObject({ level: 'error', context: 'Main', msg: 'plain text' });
  });

  it('the app logs lead events with request_id and lead_number', async () => {
    await boot();
    const l = lead();
    const res = await postLead(server, l);
    await server.outbox.whenIdle();
    const about = server.logger.lines.filter((line) => line.includes('lead created') || line.includes('card published'));
    expect(about).toHaveLength(2);
    for (const line of about) {
      expect(line).toContain(`"request_id":"${String(l.request_id)}"`);
      expect(line).toContain(`"lead_number":${String(res.body.lead_number)}`);
    }
  });
});
