/**
 * `POST /leads` idempotency and repeats (docs/requirements.md §1.1, steps 6 and 10): a known request_id (or
 * Idempotency-Key) answers the lead it made, and the same contact within 24 h is a repeat of the newest matching lead.
 */
import { FakeClock, NO_HOURLY_LIMIT, lead, postLead, sandboxSuite, type BootOptions, type TestServer, TELEGRAM_LINK } from './harness';
import { sqlRow, sqlRun } from './support/test-database';

const MIN = 60_000;
const suite = sandboxSuite();
let server: TestServer;
/** The app on a fresh database, with the Telegram sandbox and no hourly limit a test reaches. */
const boot = async (options: BootOptions = {}) => (server = await suite.boot({ limits: NO_HOURLY_LIMIT, ...options }));

function row(sql: string, ...params: unknown[]) {
  return sqlRow<Record<string, any>>(server.db, sql, ...params);
}

afterEach(() => {
  jest.restoreAllMocks();
});

describe('step 6: known request_id', () => {
  it('the same request_id twice gives 200 with the same lead number', async () => {
    await boot();
    const body = lead();
    const first = await postLead(server, body);
    expect(first).toMatchObject({ status: 201, body: { duplicate: false, repeat: false } });
    const again = await postLead(server, { ...body, name: 'Другое имя' });
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ lead_number: first.body.lead_number, duplicate: true, repeat: false, telegram_link: TELEGRAM_LINK });
    expect(await row('select count(*) as n from leads')).toEqual({ n: 1 });
  });

  it('request_id case does not make a second lead', async () => {
    await boot();
    const body = lead();
    const first = await postLead(server, body);
    const again = await postLead(server, { ...body, request_id: String(body.request_id).toUpperCase() });
    expect(again.body).toEqual({ lead_number: first.body.lead_number, duplicate: true, repeat: false, telegram_link: TELEGRAM_LINK });
  });

  it('is checked before the limits: a retry is never throttled', async () => {
    await boot({ env: { LEADS_IP_LIMIT: '1', LEADS_HOURLY_LIMIT: '1' } });
    const body = lead({ client_ip: '203.0.113.9' });
    expect((await postLead(server, body)).status).toBe(201);
    expect((await postLead(server, lead({ client_ip: '203.0.113.9' }))).status).toBe(429);
    expect(await postLead(server, body)).toMatchObject({ status: 200, body: { duplicate: true } });
  });

  it('the Idempotency-Key header stands in for a missing request_id; the body wins when both are given', async () => {
    await boot();
    const { request_id: _omit, ...body } = lead();
    const key = crypto.randomUUID();
    const first = await postLead(server, body, { 'Idempotency-Key': key });
    expect(first.status).toBe(201);
    expect(await row('select request_id from leads where id = ?', first.body.lead_number)).toEqual({ request_id: key });
    expect(await postLead(server, body, { 'Idempotency-Key': key })).toMatchObject({
      status: 200,
      body: { lead_number: first.body.lead_number, duplicate: true },
    });
    const own = crypto.randomUUID();
    const second = await postLead(
      server,
      { ...body, request_id: own, telegram: '@other_user', phone: '+12025550111' },
      { 'Idempotency-Key': key },
    );
    expect(second.status).toBe(201);
    expect(await row('select request_id from leads where id = ?', second.body.lead_number)).toEqual({ request_id: own });
    expect(await postLead(server, body, { 'Idempotency-Key': 'not-a-uuid' })).toMatchObject({
      status: 422,
      body: { errors: { request_id: 'invalid' } },
    });
    // A blank request_id is a missing one, as its rule says: the header stands in for it too.
    const blank = crypto.randomUUID();
    const third = await postLead(
      server,
      { ...body, request_id: ' ', telegram: '@third_user', phone: '+12025550122' },
      { 'Idempotency-Key': blank },
    );
    expect(third.status).toBe(201);
    expect(await row('select request_id from leads where id = ?', third.body.lead_number)).toEqual({ request_id: blank });
  });
});

describe('step 10: the submit transaction', () => {
  it('a new contact is a new lead: 201, lead number = id', async () => {
    await boot();
    const a = await postLead(server, lead());
    const b = await postLead(server, lead());
    expect(a).toMatchObject({ status: 201, body: { duplicate: false, repeat: false } });
    expect(b.body.lead_number).toBe(a.body.lead_number + 1);
  });

  it('the same username (any case) within 24 h is a repeat that stores only the changed fields', async () => {
    await boot();
    const first = lead({ telegram: '@Repeat_User', guests: '30', date: null });
    const created = await postLead(server, first);
    const again = await postLead(
      server,
      // Another phone: only the username, in another case, can make it a repeat.
      lead({ telegram: 'REPEAT_user', phone: '+79990001122', name: first.name, guests: '45', date: '1 марта', comment: first.comment }),
    );
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ lead_number: created.body.lead_number, duplicate: true, repeat: true, telegram_link: TELEGRAM_LINK });
    const stored = await row('select changes from lead_repeats where lead_id = ?', created.body.lead_number);
    expect(JSON.parse(stored!.changes)).toEqual({ phone: '+79990001122', guests: '45', date: '1 марта' });
    expect(await row('select count(*) as n from leads')).toEqual({ n: 1 });
  });

  it('the same phone within 24 h is a repeat; after 24 h it is a new lead', async () => {
    const clock = new FakeClock();
    await boot({ clock });
    const first = lead({ phone: '+12025550143' });
    const created = await postLead(server, first);
    clock.advance(24 * 60 * MIN - 1);
    expect((await postLead(server, lead({ phone: '+1 202 555 0143' }))).body).toMatchObject({
      lead_number: created.body.lead_number,
      repeat: true,
    });
    clock.advance(1);
    expect(await postLead(server, lead({ phone: '+12025550143' }))).toMatchObject({ status: 201 });
  });

  it("a repeat's own request_id is remembered: resending it is 200 duplicate with repeat true", async () => {
    await boot();
    const first = lead();
    const created = await postLead(server, first);
    const repeat = lead({ phone: first.phone });
    await postLead(server, repeat);
    expect(await postLead(server, repeat)).toMatchObject({
      status: 200,
      body: { lead_number: created.body.lead_number, duplicate: true, repeat: true },
    });
    expect(await row('select count(*) as n from lead_repeats')).toEqual({ n: 1 });
  });

  it('a spam or anonymised lead is not matched: the contact makes a new lead', async () => {
    await boot();
    const spam = lead();
    const spamLead = await postLead(server, spam);
    await sqlRun(server.db, "update leads set status = 'spam' where id = ?", spamLead.body.lead_number);
    expect((await postLead(server, lead({ telegram: spam.telegram }))).status).toBe(201);

    const gone = lead();
    const goneLead = await postLead(server, gone);
    await sqlRun(
      server.db,
      'update leads set anonymised_at = 1, phone = null, telegram = null, telegram_key = null where id = ?',
      goneLead.body.lead_number,
    );
    expect((await postLead(server, lead({ phone: gone.phone }))).status).toBe(201);
  });

  it('a repeat matches the newest matching lead', async () => {
    const clock = new FakeClock();
    await boot({ clock });
    const a = await postLead(server, lead({ telegram: '@shared_name', phone: '+12025550101' }));
    clock.advance(MIN);
    const b = await postLead(server, lead({ telegram: '@other_name', phone: '+12025550102' }));
    clock.advance(MIN);
    const r = await postLead(server, lead({ telegram: '@shared_name', phone: '+12025550102' }));
    expect(r.body.lead_number).toBe(b.body.lead_number);
    expect(a.body.lead_number).not.toBe(b.body.lead_number);
  });
});
