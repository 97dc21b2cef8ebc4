/**
 * The signed webhook deliveries to integrators (docs/requirements.md §14.8, docs/api.md "Webhooks"): the real app (startServer, the
 * sandbox's bot where a press or a command is needed) posts to a real HTTP receiver started here. Every signature is
 * checked with the verification snippet of docs/api.md, read from the document and run as it stands. Time is the
 * FakeClock's: retries and the 30-minute alert come from moving it, never from sleeping.
 */
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import { runInThisContext } from 'node:vm';
import { SECRET_HEADER } from '@stickers/shared';
import { forget, trace, webhooksReplay } from '../src/cli/ops';
import { ConfigError, loadServerConfig } from '../src/config/config';
import { HousekeepingService } from '../src/housekeeping/housekeeping.service';
import { LeadStatusService } from '../src/lead-status/lead-status.service';
import { WEBHOOK_TIMEOUT, type WebhookTimeout } from '../src/webhooks/webhook.sender';
import { OutboxService } from '../src/outbox/outbox.service';
import {
  ADMIN_CHAT,
  FakeClock,
  LEADS_CHAT,
  SALT,
  SECRET,
  lead,
  memberActions,
  postLead,
  sandboxSuite,
  submitLead,
  type TestServer,
  waitFor,
  watchAlerts,
} from './harness';
import { sqlRow, sqlRows } from './support/test-database';
import { captureConsole } from './support/console';

type Verify = (rawBody: string | Buffer, header: string | undefined, secret: string, now?: number) => boolean;

/** The verification snippet of docs/api.md, exactly as an integrator would copy it. */
function docsSnippet(): Verify {
  const doc = readFileSync(join(__dirname, '..', '..', 'docs', 'api.md'), 'utf8');
  const code = [...doc.matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1]).find((c) => c.includes('function verifyStickersSignature'));
  if (!code) throw new Error('docs/api.md has no verifyStickersSignature snippet');
  return (runInThisContext(`(function (require) {\n${code}\nreturn verifyStickersSignature;\n})`) as (r: NodeRequire) => Verify)(require);
}
const verify = docsSnippet();

const SECOND = 1000;
const MIN = 60 * SECOND;
const DAY = 24 * 60 * MIN;
const HOOK_SECRET = 'whsec_test_0123456789abcdef';
const OTHER_SECRET = 'whsec_other_fedcba9876543210';

interface Received {
  headers: IncomingHttpHeaders;
  raw: string;
  body: any;
  /** What the receiver answered (or 'hang': it never did). */
  answered: number | 'hang';
  /** The app's clock when it arrived: the receiver checks the signature's age against it. */
  at: number;
}

/** A webhook endpoint: records every request, answers as `answer` says for the n-th one (1-based). */
class Receiver {
  readonly received: Received[] = [];
  answer: (n: number) => number | 'hang' = () => 200;
  url = '';
  private readonly hanging: ServerResponse[] = [];
  private readonly server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const answered = this.answer(this.received.length + 1);
      this.received.push({ headers: req.headers, raw, body: JSON.parse(raw), answered, at: clock.now() });
      if (answered === 'hang') this.hanging.push(res);
      else res.writeHead(answered).end();
    });
  });

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    // A path and a query that hold a token: neither may show in the trace, the logs or the alert.
    this.url = `http://127.0.0.1:${(this.server.address() as { port: number }).port}/hooks/leads?token=s3cr3t-path-token`;
  }

  /** Ends the requests it left hanging (the sender sees the connection go). */
  releaseHanging(): void {
    for (const res of this.hanging.splice(0)) res.destroy();
  }

  async stop(): Promise<void> {
    this.releaseHanging();
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }

  /** The requests answered 2xx. */
  delivered(): Received[] {
    return this.received.filter((r) => typeof r.answered === 'number' && r.answered >= 200 && r.answered < 300);
  }

  ofType(type: string): Received[] {
    return this.delivered().filter((r) => r.body.type === type);
  }
}

const suite = sandboxSuite();
const { tmp, sandbox } = suite;
const { press, command } = memberActions(sandbox);
let server: TestServer;
let clock: FakeClock;
let receiver: Receiver;
let dbPath: string;
let n = 0;

const webhooks = () => server.app.get(OutboxService);
/** Where the CLI finds the server's database. */
const location = () => server.config.databaseUrl ?? dbPath;

/** The app with the receiver as its one webhook endpoint (or `hooks`), on a fresh database file unless `path` is given. */
async function boot(
  options: { polling?: boolean; env?: Record<string, string>; path?: string } = {},
  hooks: Record<string, string> = { LEADS_WEBHOOK_URL: receiver.url, LEADS_WEBHOOK_SECRET: HOOK_SECRET },
): Promise<TestServer> {
  server = await suite.boot({ dbPath: options.path, clock, polling: options.polling, env: { ...hooks, ...options.env } });
  dbPath = server.config.databasePath;
  return server;
}

/** Waits until the passes the last action started are over (the outbox's and the webhooks'). */
async function settle(): Promise<void> {
  await server.outbox.whenIdle();
  await webhooks().whenIdle();
}

/** Moves the clock on, then runs one webhook pass to its end. */
async function pass(ms = 0): Promise<void> {
  clock.advance(ms);
  await webhooks().whenIdle();
  await webhooks().tick();
}

/** The lead as `GET /leads` shows it now. */
async function listed(leadNumber: number): Promise<any> {
  const res = await fetch(`${server.url}/leads?limit=200`, { headers: { [SECRET_HEADER]: SECRET } });
  const { leads } = (await res.json()) as { leads: { lead_number: number }[] };
  return leads.find((l) => l.lead_number === leadNumber);
}

/** What a CLI command printed (console.log), with its exit code. */
async function cli(run: () => Promise<number>): Promise<{ code: number; out: string }> {
  const { result, log, error } = await captureConsole(run);
  return { code: result, out: [...log, ...error].join('\n') };
}

/** Every request's signature verifies with `secret` at the clock's time, and the event id header matches the body. */
function expectSigned(requests: Received[], secret = HOOK_SECRET): void {
  for (const r of requests) {
    expect(r.headers['content-type']).toBe('application/json');
    expect(r.headers['stickers-event-id']).toBe(r.body.id);
    expect(r.headers['stickers-event-type']).toBe(r.body.type);
    expect([r.body.id, verify(r.raw, r.headers['stickers-signature'] as string, secret, r.at)]).toEqual([r.body.id, true]);
  }
}

beforeEach(async () => {
  clock = new FakeClock();
  receiver = new Receiver();
  await receiver.start();
});
afterEach(async () => {
  await receiver.stop();
});

describe('the verification snippet of docs/api.md', () => {
  const body = '{"id":"evt_0","type":"lead.created"}';
  const now = Date.UTC(2026, 11, 1, 12, 0, 0);
  const t = Math.floor(now / 1000);
  const sign = (secret: string, time: number, raw: string) =>
    `t=${time},v1=${createHmac('sha256', secret).update(`${time}.${raw}`).digest('hex')}`;

  it('accepts a body signed with the secret at most 5 minutes ago, as a string or as the bytes received', () => {
    expect(verify(body, sign(HOOK_SECRET, t, body), HOOK_SECRET, now)).toBe(true);
    expect(verify(Buffer.from(body), sign(HOOK_SECRET, t - 299, body), HOOK_SECRET, now)).toBe(true);
  });

  it('rejects a forged body, another secret, a stale or a future timestamp, and a missing or mangled header', () => {
    const header = sign(HOOK_SECRET, t, body);
    expect(verify(body.replace('created', 'anonymised'), header, HOOK_SECRET, now)).toBe(false);
    expect(verify(body, header, OTHER_SECRET, now)).toBe(false);
    // The timestamp is signed: moving it to look fresh breaks the HMAC.
    expect(verify(body, header.replace(`t=${t}`, `t=${t + 1}`), HOOK_SECRET, now)).toBe(false);
    expect(verify(body, sign(HOOK_SECRET, t - 301, body), HOOK_SECRET, now)).toBe(false);
    expect(verify(body, sign(HOOK_SECRET, t + 301, body), HOOK_SECRET, now)).toBe(false);
    expect(verify(body, undefined, HOOK_SECRET, now)).toBe(false);
    expect(verify(body, `t=${t}`, HOOK_SECRET, now)).toBe(false);
    expect(verify(body, `t=${t},v1=zz`, HOOK_SECRET, now)).toBe(false);
  });
});

describe('configuration (LEADS_WEBHOOK_URL, LEADS_WEBHOOK_SECRET)', () => {
  const base = { LEADS_SECRET: SECRET, LEADS_IP_SALT: 'salt' };
  const problems = (env: Record<string, string>): string[] => {
    try {
      loadServerConfig({ ...base, ...env });
      return [];
    } catch (err) {
      return (err as ConfigError).problems;
    }
  };

  it('takes comma lists, one secret per URL in the same order; neither set means no webhooks', () => {
    expect(loadServerConfig(base).webhooks).toEqual([]);
    const config = loadServerConfig({
      ...base,
      LEADS_WEBHOOK_URL: 'https://crm.example.com/hooks/leads, http://10.0.0.5:8080/in',
      LEADS_WEBHOOK_SECRET: `${HOOK_SECRET},${OTHER_SECRET}`,
    });
    expect(config.webhooks).toEqual([
      { url: 'https://crm.example.com/hooks/leads', secret: HOOK_SECRET },
      { url: 'http://10.0.0.5:8080/in', secret: OTHER_SECRET },
    ]);
  });

  it('refuses half a configuration and each bad entry with one line, never printing a URL', () => {
    expect(problems({ LEADS_WEBHOOK_URL: 'https://a.example/x' })).toEqual([
      'LEADS_WEBHOOK_SECRET must be set with LEADS_WEBHOOK_URL (one secret per URL, comma-separated)',
    ]);
    expect(problems({ LEADS_WEBHOOK_SECRET: HOOK_SECRET })).toEqual([
      'LEADS_WEBHOOK_URL must be set with LEADS_WEBHOOK_SECRET (set both for webhooks, neither for none)',
    ]);
    expect(
      problems({
        LEADS_WEBHOOK_URL: 'https://a.example/x?token=t0p,ftp://b.example/y,https://a.example/x?token=t0p',
        LEADS_WEBHOOK_SECRET: `${HOOK_SECRET},short`,
      }),
    ).toEqual([
      'LEADS_WEBHOOK_SECRET must list one secret per URL of LEADS_WEBHOOK_URL, in the same order (got 2 secrets for 3 URLs)',
      'LEADS_WEBHOOK_URL entry 2 must be an http(s) URL like https://crm.example.com/hooks/leads',
      'LEADS_WEBHOOK_URL entry 3 repeats an earlier URL (each endpoint once)',
      'LEADS_WEBHOOK_SECRET entry 2 must be 16–256 characters without spaces or commas',
    ]);
  });
});

describe('webhooks through the real app', () => {
  it('without the webhook variables nothing is recorded or sent', async () => {
    await boot({}, {});
    await submitLead(server);
    await settle();
    for (const table of ['webhook_sources', 'webhook_events']) {
      expect([table, await sqlRow(server.db, `select count(*) as n from ${table}`)]).toEqual([table, { n: 0 }]);
    }
    expect(await sqlRow(server.db, `select count(*) as n from outbox where kind = 'webhook'`)).toEqual({ n: 0 });
    expect(receiver.received).toEqual([]);
  });

  it('a receiver failing 3 times (500) gets each event exactly once after success, in order per lead, each signed', async () => {
    receiver.answer = (i) => (i <= 3 ? 500 : 200);
    await boot();
    const first = lead();
    const a = await submitLead(server, first);
    await settle(); // 1: A lead.created → 500
    const again = lead({ telegram: first.telegram });
    const repeat = await postLead(server, again);
    expect(repeat.body).toMatchObject({ lead_number: a, repeat: true });
    await settle(); // A's repeat waits behind A's lead.created: nothing sent
    expect(receiver.received).toHaveLength(1);
    const b = await submitLead(server);
    await settle(); // 2: B lead.created → 500

    await pass(5 * SECOND); // 3: A lead.created → 500; 4: B lead.created → 200
    await pass(15 * SECOND); // 5: A lead.created → 200; 6: A lead.repeat → 200 (in the same pass)

    const summary = receiver.received.map((r) => [r.body.data.lead.lead_number, r.body.type, r.answered]);
    expect(summary).toEqual([
      [a, 'lead.created', 500],
      [b, 'lead.created', 500],
      [a, 'lead.created', 500],
      [b, 'lead.created', 200],
      [a, 'lead.created', 200],
      [a, 'lead.repeat', 200],
    ]);
    // Exactly once after success: each event's id is delivered once, and every failed request was that same event.
    const deliveredIds = receiver.delivered().map((r) => r.body.id as string);
    expect(new Set(deliveredIds).size).toBe(3);
    for (const r of receiver.received) expect(deliveredIds.filter((id) => id === r.body.id)).toHaveLength(1);
    expectSigned(receiver.received);

    const [created, repeated] = [
      receiver.ofType('lead.created').find((r) => r.body.data.lead.lead_number === a)!,
      receiver.ofType('lead.repeat')[0],
    ];
    expect(created.body).toEqual({
      id: expect.stringMatching(/^evt_[0-9a-f]{32}$/),
      type: 'lead.created',
      created_at: new Date(Date.UTC(2026, 10, 29, 9, 0, 0)).toISOString(),
      data: { lead: expect.objectContaining({ lead_number: a, name: first.name, telegram: first.telegram, phone: first.phone }) },
    });
    expect(repeated.body.data.repeat).toEqual({
      request_id: again.request_id,
      received_at: created.body.created_at,
      changed_fields: ['phone'],
    });
    // data.lead is the lead exactly as GET /leads shows it (nothing has changed since this delivery).
    expect(repeated.body.data.lead).toEqual(await listed(a));
    expect(repeated.body.data.lead.repeats).toBe(1);
    // The values the repeat sent come in data.lead (read when the delivery is sent), never in the event's own facts.
    expect(repeated.body.data.lead.repeat_history).toEqual([
      {
        request_id: again.request_id,
        created_at: created.body.created_at,
        received_at: created.body.created_at,
        changes: { phone: again.phone },
      },
    ]);

    const row = await sqlRow(
      server.db,
      "select attempts, done_at as delivered_at, last_error from outbox where kind = 'webhook' and lead_id = ? order by id limit 1",
      a,
    );
    expect(row).toEqual({ attempts: 3, delivered_at: clock.now(), last_error: null });
  });

  it('announces every change: lead.created, lead.repeat, lead.status_changed after a press, lead.anonymised by /stickers_forget, retention and the CLI', async () => {
    await boot({ polling: true });
    const first = lead();
    const id = await submitLead(server, first);
    await settle();
    await postLead(server, lead({ phone: first.phone }));
    await settle();
    expect(receiver.delivered().map((r) => r.body.type)).toEqual(['lead.created', 'lead.repeat']);
    expect(receiver.ofType('lead.repeat')[0].body.data.repeat.changed_fields).toEqual(['telegram']);

    const card = sandbox.messages(LEADS_CHAT).find((m) => m.text.startsWith(`🆕 Заявка #${id}\n`))!;
    clock.advance(MIN);
    expect(await press(LEADS_CHAT, card.message_id, `lead:${id}:new:in_progress`)).toBe('Готово: 🛠 В работе');
    const [changed] = await waitFor(() => receiver.ofType('lead.status_changed').length === 1 && receiver.ofType('lead.status_changed'));
    const who = await sqlRow<{ user_id: number; user_name: string }>(
      server.db,
      'select user_id, user_name from lead_status_changes where lead_id = ?',
      id,
    );
    expect(changed.body).toMatchObject({
      type: 'lead.status_changed',
      created_at: new Date(clock.now()).toISOString(),
      data: { from: 'new', to: 'in_progress', by: { telegram_user_id: who!.user_id, name: who!.user_name } },
    });
    expect(changed.body.data.lead).toMatchObject({ lead_number: id, status: 'in_progress', status_changed_by: who!.user_name });

    expect(await command(LEADS_CHAT, `/stickers_forget ${id}`)).toContain('обезличена');
    const [byNumber] = await waitFor(() => receiver.ofType('lead.anonymised').length === 1 && receiver.ofType('lead.anonymised'));
    expect(byNumber.body.data).toMatchObject({ reason: 'number', lead: { lead_number: id, name: null, telegram: null, phone: null } });
    await settle();
    expect(byNumber.body.data.lead).toEqual(await listed(id));

    // Retention: a lead stored now is anonymised 181 days later by housekeeping.
    const old = await submitLead(server);
    await settle();
    clock.advance(181 * DAY);
    await server.app.get(HousekeepingService).run();
    const byRetention = await waitFor(() => receiver.ofType('lead.anonymised').find((r) => r.body.data.lead.lead_number === old));
    expect(byRetention.body.data).toMatchObject({ reason: 'retention', lead: { anonymised_at: new Date(clock.now()).toISOString() } });

    // The CLI's forget runs in its own process: its `anonymised` row is announced by the server's next pass.
    const person = lead();
    const third = await submitLead(server, person);
    await settle();
    expect((await cli(() => forget(location(), '--phone', person.phone as string, clock.now(), SALT))).code).toBe(0);
    await pass();
    const byCli = receiver.ofType('lead.anonymised').find((r) => r.body.data.lead.lead_number === third)!;
    expect(byCli.body.data).toMatchObject({ reason: 'contact', lead: { lead_number: third, phone: null } });

    expect(receiver.delivered().map((r) => [r.body.data.lead.lead_number, r.body.type])).toEqual([
      [id, 'lead.created'],
      [id, 'lead.repeat'],
      [id, 'lead.status_changed'],
      [id, 'lead.anonymised'],
      [old, 'lead.created'],
      [old, 'lead.anonymised'],
      [third, 'lead.created'],
      [third, 'lead.anonymised'],
    ]);
    expectSigned(receiver.received);
  });

  it('the trace shows each attempt; replay by lead number or event id sends the event again', async () => {
    receiver.answer = (i) => (i === 1 ? 503 : 200);
    await boot();
    const id = await submitLead(server);
    await settle();
    await pass(5 * SECOND);
    expect(receiver.received.map((r) => r.answered)).toEqual([503, 200]);
    const eventId = receiver.received[0].body.id as string;
    const origin = new URL(receiver.url).origin;

    const traced = await cli(() => trace(location(), String(id), false));
    expect(traced.code).toBe(0);
    expect(traced.out).toMatch(
      new RegExp(
        `webhook_failed: lead\\.created ${eventId} to ${origin.replace(/\./g, '\\.')}: HTTP 503, attempt 1; next attempt at \\S+Z`,
      ),
    );
    expect(traced.out).toContain(`webhook_sent: lead.created ${eventId} to ${origin}: HTTP 200, attempt 2`);
    expect(traced.out).not.toContain('s3cr3t-path-token');

    const byLead = await cli(() => webhooksReplay(location(), `#${id}`, server.config.webhooks, clock));
    expect(byLead).toEqual({
      code: 0,
      out: `queued again: 1 deliveries of 1 event(s) (lead.created ${eventId}); the server sends them at its next pass`,
    });
    await pass();
    const byEvent = await cli(() => webhooksReplay(location(), eventId, server.config.webhooks, clock));
    expect(byEvent.code).toBe(0);
    await pass();
    expect(receiver.received.map((r) => [r.body.id, r.answered])).toEqual([
      [eventId, 503],
      [eventId, 200],
      [eventId, 200],
      [eventId, 200],
    ]);
    expectSigned(receiver.received);
    const after = (await cli(() => trace(location(), String(id), false))).out;
    expect(after).toContain(`webhook_replayed: lead.created ${eventId} to ${origin} queued again`);
    expect(after).toContain(`webhook_sent: lead.created ${eventId} (replay) to ${origin}: HTTP 200, attempt 1`);

    expect(await cli(() => webhooksReplay(location(), '99999', server.config.webhooks, clock))).toEqual({
      code: 1,
      out: 'no webhook events of lead #99999: nothing queued',
    });
    expect((await cli(() => webhooksReplay(location(), 'evt_nope', server.config.webhooks, clock))).code).toBe(2);
  });

  it('replay queues and counts only the URLs LEADS_WEBHOOK_URL still lists: a removed one would wait forever', async () => {
    const path = join(tmp.dir, `webhooks-removed-${++n}.sqlite`);
    const other = new Receiver();
    await other.start();
    try {
      await boot({ path }, { LEADS_WEBHOOK_URL: `${receiver.url},${other.url}`, LEADS_WEBHOOK_SECRET: `${HOOK_SECRET},${OTHER_SECRET}` });
      const id = await submitLead(server);
      await settle();
      expect([receiver.received.length, other.received.length]).toEqual([1, 1]);
      const eventId = receiver.received[0].body.id as string;
      await server.close();
      // The other URL is taken out of the configuration.
      await boot({ path });
      const waiting = () => sqlRows(server.db, "select target from outbox where kind = 'webhook' and done_at is null and lead_id = ?", id);

      expect(await cli(() => webhooksReplay(location(), eventId, server.config.webhooks, clock))).toEqual({
        code: 0,
        out:
          `queued again: 1 deliveries of 1 event(s) (lead.created ${eventId}); 1 to URLs no longer in LEADS_WEBHOOK_URL not queued; ` +
          'the server sends them at its next pass',
      });
      expect(await waiting()).toEqual([{ target: server.config.webhooks[0].url }]);
      await pass();
      expect(await waiting()).toEqual([]);
      expect(receiver.received.map((r) => r.body.id)).toEqual([eventId, eventId]);
      const replayed = await sqlRows(server.db, "select detail from lead_events where lead_id = ? and kind = 'webhook_replayed'", id);
      expect(replayed).toEqual([{ detail: `lead.created ${eventId} to ${new URL(receiver.url).origin} queued again` }]);

      // Configured with neither URL any more: nothing queued, and the CLI says why.
      const elsewhere = [{ url: 'https://crm.example.com/hooks/leads', secret: OTHER_SECRET }];
      expect(await cli(() => webhooksReplay(location(), `${id}`, elsewhere, clock))).toEqual({
        code: 1,
        out: `webhook events of lead #${id}: 2 to URLs no longer in LEADS_WEBHOOK_URL not queued; nothing queued`,
      });
      expect(await waiting()).toEqual([]);
      // Without LEADS_WEBHOOK_URL the CLI cannot tell: it refuses rather than queue what may never be sent.
      const unset = await cli(() => webhooksReplay(location(), eventId, [], clock));
      expect(unset.code).toBe(2);
      expect(unset.out).toMatch(/^LEADS_WEBHOOK_URL is not set/);
    } finally {
      await other.stop();
    }
  });

  it('a receiver that does not answer within the timeout is a failure, tried again on the schedule; it gets one try per pass', async () => {
    receiver.answer = (i) => (i <= 3 ? 'hang' : 200);
    await boot();
    // The 10 s of production, shortened for this app only (the provider WEBHOOK_TIMEOUT).
    server.app.get<WebhookTimeout>(WEBHOOK_TIMEOUT).ms = 200;
    const one = await submitLead(server);
    await settle(); // 1: one's lead.created hangs
    const two = await submitLead(server);
    await settle(); // 2: two's lead.created hangs
    const failed = await sqlRows(server.db, "select detail from lead_events where lead_id = ? and kind = 'webhook_failed'", one);
    expect(failed).toEqual([{ detail: expect.stringMatching(/: no answer within 0\.2 s, attempt 1; next attempt at /) }]);

    // Both are due again; the first hangs, and the URL gets no second try in this pass.
    await pass(5 * SECOND); // 3: one's hangs
    expect(receiver.received.map((r) => [r.body.data.lead.lead_number, r.answered])).toEqual([
      [one, 'hang'],
      [two, 'hang'],
      [one, 'hang'],
    ]);
    await pass(); // 4: two's → 200
    await pass(15 * SECOND); // 5: one's → 200
    expect(receiver.received.slice(3).map((r) => [r.body.data.lead.lead_number, r.answered])).toEqual([
      [two, 200],
      [one, 200],
    ]);
    expect(receiver.received[4].body.id).toBe(receiver.received[0].body.id);
    expect(await sqlRow(server.db, "select attempts, first_failed_at from outbox where kind = 'webhook' and lead_id = ?", one)).toEqual({
      attempts: 3,
      first_failed_at: clock.now() - 20 * SECOND,
    });
  });

  it('a receiver that hangs holds only its own deliveries: another endpoint gets its events, and its retry on time', async () => {
    const other = new Receiver();
    await other.start();
    try {
      receiver.answer = () => 'hang';
      other.answer = (i) => (i === 1 ? 500 : 200);
      await boot({}, { LEADS_WEBHOOK_URL: `${receiver.url},${other.url}`, LEADS_WEBHOOK_SECRET: `${HOOK_SECRET},${HOOK_SECRET}` });
      // Far longer than this test: the first endpoint's lane waits for it all along.
      server.app.get<WebhookTimeout>(WEBHOOK_TIMEOUT).ms = 60_000;
      const id = (await postLead(server, lead())).body.lead_number as number;
      await waitFor(() => receiver.received.length === 1 && other.received.length === 1, 5000, 'both endpoints asked');
      // The other endpoint's 500 is recorded (its next attempt 5 s on) before the clock moves.
      await waitFor(() => server.logger.lines.some((l) => l.includes('webhook attempt failed')), 5000, 'the failure recorded');
      clock.advance(5 * SECOND);
      webhooks().publishSoon();
      await waitFor(() => other.received.length === 2, 5000, "the other endpoint's retry");
      expect(other.received.map((r) => [r.body.data.lead.lead_number, r.answered])).toEqual([
        [id, 500],
        [id, 200],
      ]);
      expect(other.received[1].at - other.received[0].at).toBe(5 * SECOND);
      expect(receiver.received.map((r) => r.answered)).toEqual(['hang']);
    } finally {
      receiver.releaseHanging();
      await other.stop();
    }
  });

  it('alerts the admin chat once a delivery has failed for 30 minutes, throttled like the outbox', async () => {
    receiver.answer = () => 500;
    await boot();
    const alerts = watchAlerts(server);
    const id = await submitLead(server);
    await settle(); // attempt 1 at 0:00
    for (const delay of [5 * SECOND, 15 * SECOND, MIN, 5 * MIN, 15 * MIN]) await pass(delay); // attempts 2–6, the last at 21:20
    expect(receiver.received).toHaveLength(6);
    expect((await alerts()).filter((a) => a.key === 'webhook_failing')).toEqual([]);

    await pass(15 * MIN); // attempt 7 at 36:20: failing for more than 30 minutes
    expect((await alerts()).filter((a) => a.key === 'webhook_failing')).toEqual([{ key: 'webhook_failing', result: 'sent' }]);
    const alert = sandbox.messages(ADMIN_CHAT).find((m) => m.text.startsWith('🚨 Вебхук не доставляется'))!;
    expect(alert.text).toBe(
      `🚨 Вебхук не доставляется больше 30 мин: ${new URL(receiver.url).origin}, событие lead.created заявки #${id}, попыток: 7, ` +
        `последняя ошибка: HTTP 500. История: trace #${id}.`,
    );

    await pass(15 * MIN); // attempt 8: within the 30-minute throttle
    expect((await alerts()).filter((a) => a.key === 'webhook_failing').map((a) => a.result)).toEqual(['sent', 'throttled']);
    expect(receiver.received).toHaveLength(8);
    expect(receiver.delivered()).toEqual([]);
  });

  it('each endpoint gets its own signature, and a failing endpoint never holds another back', async () => {
    const down = new Receiver();
    await down.start();
    down.answer = () => 500;
    try {
      await boot({}, { LEADS_WEBHOOK_URL: `${down.url},${receiver.url}`, LEADS_WEBHOOK_SECRET: `${OTHER_SECRET},${HOOK_SECRET}` });
      const first = lead();
      const id = await submitLead(server, first);
      await settle();
      await postLead(server, lead({ telegram: first.telegram }));
      await settle();
      expect(receiver.delivered().map((r) => r.body.type)).toEqual(['lead.created', 'lead.repeat']);
      expect(down.received.map((r) => [r.body.type, r.answered])).toEqual([['lead.created', 500]]);
      expectSigned(receiver.received, HOOK_SECRET);
      expectSigned(down.received, OTHER_SECRET);
      expect(
        verify(receiver.received[0].raw, receiver.received[0].headers['stickers-signature'] as string, OTHER_SECRET, clock.now()),
      ).toBe(false);
      // The same event, the same id, to both.
      expect(down.received[0].body.id).toBe(receiver.received[0].body.id);
      expect(
        await sqlRow(server.db, "select count(*) as n from outbox where kind = 'webhook' and lead_id = ? and done_at is null", id),
      ).toEqual({ n: 2 });
    } finally {
      await server.close();
      await down.stop();
    }
  });

  it('configured later, webhooks announce only what is stored from then on', async () => {
    const path = join(tmp.dir, `webhooks-later-${++n}.sqlite`);
    await boot({ path }, {});
    const before = await submitLead(server);
    await settle();
    await server.close();

    await boot({ path });
    const after = await submitLead(server);
    await settle();
    expect(receiver.delivered().map((r) => r.body.data.lead.lead_number)).toEqual([after]);
    expect(after).toBe(before + 1);
  });

  it('a backlog longer than a pass reads keeps each lead in order: no change is announced before the lead itself', async () => {
    const path = join(tmp.dir, `webhooks-backlog-${++n}.sqlite`);
    await boot({ path });
    await submitLead(server);
    await settle();
    await server.close();
    // Turned off a while: 120 leads, then the last one's status changes; turned on again.
    await boot({ path }, {});
    let last = 0;
    for (let i = 0; i < 120; i += 1) last = await submitLead(server);
    clock.advance(MIN);
    const by = { telegramUserId: null, name: 'CRM' };
    expect((await server.app.get(LeadStatusService).set({ leadId: last, expected: 'new', to: 'in_progress', by })).kind).toBe('changed');
    await server.close();
    await boot({ path });
    for (let i = 0; i < 4; i += 1) await pass();
    await settle();
    expect(receiver.delivered()).toHaveLength(1 + 120 + 1);
    const ofLast = receiver.delivered().filter((r) => r.body.data.lead.lead_number === last);
    expect(ofLast.map((r) => r.body.type)).toEqual(['lead.created', 'lead.status_changed']);
  });
});
