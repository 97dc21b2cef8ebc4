/**
 * `GET /webhooks/events` and `POST /webhooks/events/{id}/redeliver` behind the shared secret: the events with the
 * state of each delivery (the endpoint named by its origin only), and a redelivery that is `webhooks replay`'s.
 */
import { SECRET_HEADER } from '@stickers/shared';
import { join } from 'node:path';
import request from 'supertest';
import { FakeClock, SECRET, sandboxSuite, submitLead, type TestServer } from './harness';
import { sqlRows } from './support/test-database';
import { WebhookReceiver } from './support/webhook-receiver';

const HOOK_SECRET = 'whsec_test_0123456789abcdef';
const MIN = 60_000;
const suite = sandboxSuite();
let server: TestServer;
let clock: FakeClock;
let receiver: WebhookReceiver;

const api = () => request(server.app.getHttpServer());
const list = (query = '') => api().get(`/webhooks/events${query}`).set(SECRET_HEADER, SECRET);
const redeliver = (id: string) => api().post(`/webhooks/events/${id}/redeliver`).set(SECRET_HEADER, SECRET);

/** Runs one webhook pass to its end. */
async function pass(): Promise<void> {
  await server.outbox.whenIdle();
  await server.outbox.tick();
}

beforeEach(async () => {
  clock = new FakeClock();
  receiver = new WebhookReceiver();
  await receiver.start();
  server = await suite.boot({ clock, env: { LEADS_WEBHOOK_URL: receiver.url, LEADS_WEBHOOK_SECRET: HOOK_SECRET } });
});
afterEach(async () => {
  await receiver.stop();
});

describe('GET /webhooks/events', () => {
  it('lists a delivered and a failing event, newest first, each delivery with its state and only its origin', async () => {
    receiver.answer = (n) => (n === 1 ? 204 : 500);
    const first = await submitLead(server);
    await pass();
    clock.advance(MIN);
    const second = await submitLead(server);
    await pass();
    expect(receiver.received.map((r) => r.answered)).toEqual([204, 500]);

    const res = await list();
    expect(res.status).toBe(200);
    expect(res.text).not.toContain('s3cr3t-path-token');
    expect(res.text).not.toContain('/hooks/leads');
    expect(res.body).toEqual({
      events: [
        {
          id: receiver.received[1].body.id,
          type: 'lead.created',
          lead_number: second,
          created_at: new Date(clock.now()).toISOString(),
          deliveries: [{ endpoint: receiver.origin, delivered_at: null, attempts: 1, last_error: 'HTTP 500' }],
        },
        {
          id: receiver.received[0].body.id,
          type: 'lead.created',
          lead_number: first,
          created_at: new Date(clock.now() - MIN).toISOString(),
          deliveries: [
            { endpoint: receiver.origin, delivered_at: new Date(clock.now() - MIN).toISOString(), attempts: 1, last_error: null },
          ],
        },
      ],
    });
    const since = await list(`?since=${encodeURIComponent(new Date(clock.now()).toISOString())}`);
    expect(since.body.events.map((e: { lead_number: number }) => e.lead_number)).toEqual([second]);
    expect((await list('?limit=1')).body.events.map((e: { lead_number: number }) => e.lead_number)).toEqual([second]);
    // `since` as GET /leads reads it: epoch milliseconds too, and an empty parameter is no parameter.
    expect((await list(`?since=${clock.now()}`)).body.events.map((e: { lead_number: number }) => e.lead_number)).toEqual([second]);
    expect((await list('?since=&limit=')).body.events).toHaveLength(2);
  });

  it('refuses a bad query with 422 invalid_query, and a caller without the secret with 401', async () => {
    const res = await list('?since=yesterday&limit=0');
    expect(res.status).toBe(422);
    expect(res.body.error).toBe('invalid_query');
    expect(Object.keys(res.body.errors).sort()).toEqual(['limit', 'since']);
    // A parameter given twice is said to be, whatever its values, beside the other parameters' problems.
    const twice = await list('?limit=2&limit=3&since=yesterday');
    expect([twice.status, twice.body]).toEqual([
      422,
      { error: 'invalid_query', errors: { limit: 'must be given once', since: expect.stringMatching(/^must be an ISO 8601/) } },
    ]);
    // ISO 8601 forms that name no instant a database can compare (a week, a day of the year), or no real day.
    for (const since of ['2026-W01', '2026-335', '2026-02-30']) {
      const week = await list(`?since=${since}`);
      expect([week.status, week.body.errors]).toEqual([422, { since: expect.stringMatching(/^must be an ISO 8601 date or time/) }]);
    }
    expect((await api().get('/webhooks/events')).status).toBe(401);
  });

  it('pages back with before (the last id of a page): every event once, newest first, events of one millisecond too', async () => {
    const leads = [];
    for (let i = 0; i < 5; i += 1) {
      leads.push(await submitLead(server));
      if (i !== 1 && i !== 2) clock.advance(MIN); // leads 2, 3 and 4 share a millisecond
    }
    const seen: number[] = [];
    let before = '';
    for (let page = 0; page < 4; page += 1) {
      const res = await list(`?limit=2${before ? `&before=${before}` : ''}`);
      expect(res.status).toBe(200);
      const events = res.body.events as { id: string; lead_number: number }[];
      seen.push(...events.map((e) => e.lead_number));
      if (events.length < 2) break;
      before = events[events.length - 1].id;
    }
    expect(seen).toEqual([...leads].reverse());
    const since = encodeURIComponent(new Date(clock.now() - 2 * MIN).toISOString());
    const newest = await list(`?since=${since}&limit=1`);
    const older = await list(`?since=${since}&before=${newest.body.events[0].id}`);
    expect(older.body.events.map((e: { lead_number: number }) => e.lead_number)).toEqual([leads[3], leads[2], leads[1]]);

    const unknown = await list(`?before=evt_${'0'.repeat(32)}`);
    expect([unknown.status, unknown.body]).toEqual([422, { error: 'invalid_query', errors: { before: 'no event has this id' } }]);
    // An empty parameter is no parameter, as for since and limit.
    expect((await list('?before=&limit=')).body.events).toHaveLength(5);
    const malformed = await list('?before=42');
    expect([malformed.status, malformed.body.errors]).toEqual([422, { before: expect.stringMatching(/^must be the id of an event/) }]);
  });
});

describe('POST /webhooks/events/{id}/redeliver', () => {
  it('queues the event again to its endpoint: the receiver gets the same event id again, and the trace says so', async () => {
    const leadNumber = await submitLead(server);
    await pass();
    expect(receiver.received).toHaveLength(1);
    const id = receiver.received[0].body.id as string;

    const res = await redeliver(id);
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ queued: 1 });
    await pass();
    expect(receiver.received.map((r) => [r.body.id, r.headers['stickers-event-id'], r.answered])).toEqual([
      [id, id, 200],
      [id, id, 200],
    ]);
    const replayed = await sqlRows<{ detail: string }>(
      server.db,
      "select detail from lead_events where lead_id = ? and kind = 'webhook_replayed'",
      leadNumber,
    );
    expect(replayed).toEqual([{ detail: `lead.created ${id} to ${receiver.origin} queued again` }]);
  });

  it('queues and counts only the endpoints LEADS_WEBHOOK_URL still lists: a removed one is never sent', async () => {
    const other = new WebhookReceiver();
    await other.start();
    try {
      const env = { LEADS_WEBHOOK_URL: `${receiver.url},${other.url}`, LEADS_WEBHOOK_SECRET: `${HOOK_SECRET},${HOOK_SECRET}` };
      const dbPath = join(suite.tmp.dir, 'removed-endpoint.sqlite');
      await server.close(); // beforeEach's, with the one endpoint
      server = await suite.boot({ clock, dbPath, env });
      const leadNumber = await submitLead(server);
      await pass();
      expect([receiver.received.length, other.received.length]).toEqual([1, 1]);
      const id = receiver.received[0].body.id as string;
      await server.close();
      server = await suite.boot({ clock, dbPath, env: { LEADS_WEBHOOK_URL: receiver.url, LEADS_WEBHOOK_SECRET: HOOK_SECRET } });

      const res = await redeliver(id);
      expect([res.status, res.body]).toEqual([202, { queued: 1 }]);
      await pass();
      expect(receiver.received.map((r) => r.body.id)).toEqual([id, id]);
      const waiting = await sqlRows(
        server.db,
        "select target from outbox where kind = 'webhook' and done_at is null and lead_id = ?",
        leadNumber,
      );
      expect(waiting).toEqual([]);
      const replayed = await sqlRows<{ detail: string }>(
        server.db,
        "select detail from lead_events where lead_id = ? and kind = 'webhook_replayed'",
        leadNumber,
      );
      expect(replayed).toEqual([{ detail: `lead.created ${id} to ${receiver.origin} queued again` }]);
    } finally {
      await other.stop();
    }
  });

  it('404 for an id no event has, or that is not an event id', async () => {
    for (const id of [`evt_${'0'.repeat(32)}`, 'evt_nope']) {
      const res = await redeliver(id);
      expect([id, res.status, res.body]).toEqual([id, 404, { error: 'not_found' }]);
    }
  });
});
