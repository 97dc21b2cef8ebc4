/**
 * `POST /leads` against the real app: a temp SQLite file, real HTTP over loopback, the Telegram sandbox.
 * One test (at least) per server step of docs/requirements.md §1.1 and per row of §1.2 and §2.2.
 */
import { createHmac } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { join } from 'node:path';
import { SECRET_HEADER } from '@stickers/shared';
import { ADMIN_CHAT, FakeClock, SALT, SECRET, lead, postLead, type TestServer, sandboxSuite, watchAlerts } from './harness';
import { sqlRow, sqlRun } from './support/test-database';

const MIN = 60_000;
const { tmp, sandbox, start } = sandboxSuite();
let server: TestServer;
let dbFile = 0;

async function boot(env: Record<string, string> = {}, clock?: FakeClock) {
  server = await start({
    dbPath: join(tmp.dir, `leads-${++dbFile}.sqlite`),
    sandbox,
    clock,
    env: { LEADS_HOURLY_LIMIT: '100000', ...env },
  });
  return server;
}

function row(sql: string, ...params: unknown[]) {
  return sqlRow<Record<string, any>>(server.db, sql, ...params);
}

afterEach(() => {
  jest.restoreAllMocks();
});

describe('step 1: module switched off', () => {
  it('LEADS_ENABLED=0 answers 404 not_found', async () => {
    await boot({ LEADS_ENABLED: '0' });
    const res = await postLead(server, lead());
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: 'not_found' });
  });
  it('an empty LEADS_SECRET answers 404 even with no salt set', async () => {
    await boot({ LEADS_SECRET: '', LEADS_IP_SALT: '' });
    const res = await postLead(server, lead(), { [SECRET_HEADER]: '' });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: 'not_found' });
  });
});

describe('steps 2–3: secret and wrong-secret lockout', () => {
  it('a wrong or missing secret answers 401 and stores nothing', async () => {
    await boot();
    expect(await postLead(server, lead(), { [SECRET_HEADER]: 'wrong' })).toMatchObject({ status: 401, body: { error: 'unauthorized' } });
    const res = await fetch(`${server.url}/leads`, { method: 'POST', body: JSON.stringify(lead()) });
    expect(res.status).toBe(401);
    expect(await row('select count(*) as n from leads')).toEqual({ n: 0 });
  });

  it('after 5 wrong secrets in 10 minutes the caller gets 429 (why: secret), even with the right secret, until the window passes', async () => {
    const clock = new FakeClock();
    await boot({}, clock);
    for (let i = 0; i < 5; i += 1) {
      expect((await postLead(server, lead(), { [SECRET_HEADER]: `wrong-${i}` })).status).toBe(401);
      clock.advance(MIN);
    }
    const locked = await postLead(server, lead());
    expect(locked.status).toBe(429);
    expect(locked.body).toEqual({ error: 'rate_limited', why: 'secret' });
    // The first failure was at t=0, so the window has room again at t=10 min; now is t=5 min.
    expect(locked.headers.get('retry-after')).toBe('300');
    clock.advance(5 * MIN);
    expect((await postLead(server, lead())).status).toBe(201);
  });

  it('missing secrets count as wrong ones: 5 requests without the header lock the caller out, even with the right secret', async () => {
    await boot();
    const noSecret = () =>
      fetch(`${server.url}/leads`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(lead()) });
    for (let i = 0; i < 5; i += 1) expect((await noSecret()).status).toBe(401);
    expect(await postLead(server, lead())).toMatchObject({ status: 429, body: { error: 'rate_limited', why: 'secret' } });
    expect(await row('select count(*) as n from leads')).toEqual({ n: 0 });
  });

  it('four wrong secrets do not lock the caller out', async () => {
    await boot();
    for (let i = 0; i < 4; i += 1) await postLead(server, lead(), { [SECRET_HEADER]: 'wrong' });
    expect((await postLead(server, lead())).status).toBe(201);
  });

  it('the lockout survives a restart while its window lasts', async () => {
    const clock = new FakeClock();
    await boot({}, clock);
    for (let i = 0; i < 5; i += 1) await postLead(server, lead(), { [SECRET_HEADER]: 'wrong' });
    const dbPath = server.config.databasePath;
    await server.close();
    server = await start({ dbPath, sandbox, clock, env: { LEADS_HOURLY_LIMIT: '100000' } });
    expect(await postLead(server, lead())).toMatchObject({ status: 429, body: { why: 'secret' } });
  });
});

describe('step 4: size and JSON', () => {
  it('a wrong secret with a 20 KB body is 401, not 413', async () => {
    await boot();
    const res = await postLead(server, lead({ comment: 'x'.repeat(20_000) }), { [SECRET_HEADER]: 'wrong' });
    expect(res).toMatchObject({ status: 401, body: { error: 'unauthorized' } });
  });

  it('the right secret with 16385 bytes is 413; 16384 bytes is read', async () => {
    await boot();
    const base = JSON.stringify(lead({ comment: '' }));
    const pad = (size: number) => base.slice(0, -1) + `,"pad":"${'p'.repeat(size - Buffer.byteLength(base) - 9)}"}`;
    expect(Buffer.byteLength(pad(16385))).toBe(16385);
    expect(await postLead(server, pad(16385))).toMatchObject({ status: 413, body: { error: 'payload_too_large' } });
    expect((await postLead(server, pad(16384))).status).toBe(201);
  });

  it('a declared Content-Length over the limit is 413 before a byte of the body is read: the headers alone get it', async () => {
    await boot();
    const { hostname, port } = new URL(server.url);
    const head = [
      `POST /leads HTTP/1.1`,
      `Host: ${hostname}`,
      `${SECRET_HEADER}: ${SECRET}`,
      'Content-Type: application/json',
      'Content-Length: 20000',
    ];
    // The client sends the headers and no body at all, and waits: only an answer given unread can reach it.
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(port), hostname, () => socket.write(`${head.join('\r\n')}\r\n\r\n`));
      const received: Buffer[] = [];
      socket.on('data', (d: Buffer) => {
        received.push(d);
        const text = Buffer.concat(received).toString('utf8');
        if (text.includes('payload_too_large')) {
          socket.destroy();
          resolve(text);
        }
      });
      socket.on('error', reject);
      socket.on('close', () => resolve(Buffer.concat(received).toString('utf8')));
    });
    expect(answer).toMatch(/^HTTP\/1\.1 413 /);
    expect(answer).toContain('Connection: close');
    expect(answer).toContain('{"error":"payload_too_large"}');
    expect(await row('select count(*) as n from leads')).toEqual({ n: 0 });
  });

  it('a chunked body (no Content-Length) over the limit is 413', async () => {
    await boot();
    const body = JSON.stringify(lead({ comment: 'к'.repeat(9000) }));
    const res = await fetch(`${server.url}/leads`, {
      method: 'POST',
      headers: { [SECRET_HEADER]: SECRET, 'Content-Type': 'application/json' },
      body: new Blob([body]).stream(),
      duplex: 'half',
    });
    expect(res.status).toBe(413);
  });

  it.each([
    ['invalid JSON', '{"name": '],
    ['an array', '[1,2]'],
    ['null', 'null'],
    ['a string', '"hello"'],
    ['a number', '42'],
    ['an empty body', ''],
    ['invalid UTF-8', Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d])],
  ])('%s is 422 invalid_body', async (_what, payload) => {
    await boot();
    const res = await fetch(`${server.url}/leads`, {
      method: 'POST',
      headers: { [SECRET_HEADER]: SECRET, 'Content-Type': 'application/json' },
      body: payload,
    });
    expect(res.status).toBe(422);
    expect(await res.json()).toEqual({ error: 'invalid_body' });
  });

  it('a 50 MB upload is refused without being read: the answer comes before the client has sent it', async () => {
    await boot();
    for (const declared of [true, false]) {
      const { status, sent } = await new Promise<{ status: number; sent: number }>((resolve, reject) => {
        const url = new URL(`${server.url}/leads`);
        const total = 50 * 1024 * 1024;
        const req = httpRequest({
          host: url.hostname,
          port: url.port,
          path: '/leads',
          method: 'POST',
          headers: { [SECRET_HEADER]: SECRET, 'Content-Type': 'application/json', ...(declared ? { 'Content-Length': total } : {}) },
        });
        let sent = 0;
        let answered = false;
        const chunk = Buffer.alloc(64 * 1024, 0x20);
        req.on('response', (res) => {
          answered = true;
          res.resume();
          resolve({ status: res.statusCode ?? 0, sent });
          req.destroy();
        });
        req.on('error', (err) => (answered ? undefined : reject(err)));
        const pump = () => {
          while (!answered && sent < total) {
            sent += chunk.length;
            if (!req.write(chunk)) return void req.once('drain', pump);
          }
          if (!answered) req.end();
        };
        pump();
      });
      expect(status).toBe(413);
      expect(sent).toBeLessThan(8 * 1024 * 1024);
    }
  });
});

describe('step 5: fields (requirements §2)', () => {
  it('names every failing field with its code', async () => {
    await boot();
    const res = await postLead(server, {
      request_id: 'nope',
      name: 'A',
      telegram: '@ab',
      phone: '123',
      date: 'д'.repeat(61),
      guests: 7,
      comment: 'к'.repeat(1201),
      client_ip: '999.1.1.1',
    });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({
      error: 'invalid',
      errors: {
        request_id: 'invalid',
        name: 'too_short',
        telegram: 'invalid',
        phone: 'invalid',
        date: 'too_long',
        guests: 'invalid',
        comment: 'too_long',
        client_ip: 'invalid',
      },
    });
  });

  it('missing required fields are "required"', async () => {
    await boot();
    const res = await postLead(server, { name: '  ', telegram: null });
    expect(res.body).toEqual({
      error: 'invalid',
      errors: { name: 'required', telegram: 'required', phone: 'required', request_id: 'required' },
    });
  });

  it('stores the normalised values and ignores unknown fields', async () => {
    await boot();
    const body = lead({
      name: '  Анна   Ким ',
      telegram: 'https://t.me/Anna_Kim',
      phone: '+7 (999) 123-45-67',
      date: '',
      extra: { nested: true },
    });
    const res = await postLead(server, body);
    expect(res.status).toBe(201);
    expect(await row('select name, telegram, telegram_key, phone, date from leads where id = ?', res.body.lead_number)).toEqual({
      name: 'Анна Ким',
      telegram: '@Anna_Kim',
      telegram_key: '@anna_kim',
      phone: '+79991234567',
      date: null,
    });
  });

  it('an invalid body stores nothing and counts against no limit', async () => {
    await boot({ LEADS_IP_LIMIT: '1' });
    for (let i = 0; i < 3; i += 1) expect((await postLead(server, lead({ phone: 'x', client_ip: '203.0.113.1' }))).status).toBe(422);
    expect((await postLead(server, lead({ client_ip: '203.0.113.1' }))).status).toBe(201);
  });
});

describe('step 6: known request_id', () => {
  it('the same request_id twice gives 200 with the same lead number', async () => {
    await boot();
    const body = lead();
    const first = await postLead(server, body);
    expect(first).toMatchObject({ status: 201, body: { duplicate: false, repeat: false } });
    const again = await postLead(server, { ...body, name: 'Другое имя' });
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ lead_number: first.body.lead_number, duplicate: true, repeat: false });
    expect(await row('select count(*) as n from leads')).toEqual({ n: 1 });
  });

  it('request_id case does not make a second lead', async () => {
    await boot();
    const body = lead();
    const first = await postLead(server, body);
    const again = await postLead(server, { ...body, request_id: String(body.request_id).toUpperCase() });
    expect(again.body).toEqual({ lead_number: first.body.lead_number, duplicate: true, repeat: false });
  });

  it('is checked before the limits: a retry is never throttled', async () => {
    await boot({ LEADS_IP_LIMIT: '1', LEADS_HOURLY_LIMIT: '1' });
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
  });
});

describe('step 7: ip_hash', () => {
  it('is HMAC-SHA256 of client_ip with LEADS_IP_SALT; without client_ip the caller is the visitor', async () => {
    await boot();
    const withIp = await postLead(server, lead({ client_ip: '203.0.113.7' }));
    const hmac = (ip: string) => createHmac('sha256', SALT).update(ip).digest('hex');
    expect(await row('select ip_hash from leads where id = ?', withIp.body.lead_number)).toEqual({ ip_hash: hmac('203.0.113.7') });
    const { client_ip: _none, ...noIp } = lead();
    const withoutIp = await postLead(server, noIp);
    expect(await row('select ip_hash from leads where id = ?', withoutIp.body.lead_number)).toEqual({ ip_hash: hmac('127.0.0.1') });
  });
});

describe('step 8: per-visitor limit', () => {
  it('the 6th accepted submission from one visitor in 10 minutes is 429 (why: visitor) with Retry-After; others pass', async () => {
    const clock = new FakeClock();
    await boot({}, clock);
    for (let i = 0; i < 5; i += 1) {
      expect((await postLead(server, lead({ client_ip: '203.0.113.50' }))).status).toBe(201);
      clock.advance(MIN);
    }
    const limited = await postLead(server, lead({ client_ip: '203.0.113.50' }));
    expect(limited).toMatchObject({ status: 429, body: { error: 'rate_limited', why: 'visitor' } });
    expect(limited.headers.get('retry-after')).toBe('300');
    expect((await postLead(server, lead({ client_ip: '203.0.113.51' }))).status).toBe(201);
    clock.advance(5 * MIN);
    expect((await postLead(server, lead({ client_ip: '203.0.113.50' }))).status).toBe(201);
  });

  it('repeats count as accepted submissions; IPv4-mapped IPv6 is the same visitor', async () => {
    await boot({ LEADS_IP_LIMIT: '2' });
    const first = lead({ client_ip: '203.0.113.60' });
    await postLead(server, first);
    expect((await postLead(server, lead({ telegram: first.telegram, client_ip: '::ffff:203.0.113.60' }))).body.repeat).toBe(true);
    expect((await postLead(server, lead({ client_ip: '203.0.113.60' }))).body).toEqual({ error: 'rate_limited', why: 'visitor' });
  });

  it('LEADS_IP_LIMIT and LEADS_IP_WINDOW_SEC are honoured', async () => {
    const clock = new FakeClock();
    await boot({ LEADS_IP_LIMIT: '2', LEADS_IP_WINDOW_SEC: '60' }, clock);
    await postLead(server, lead({ client_ip: '203.0.113.70' }));
    await postLead(server, lead({ client_ip: '203.0.113.70' }));
    expect((await postLead(server, lead({ client_ip: '203.0.113.70' }))).headers.get('retry-after')).toBe('60');
    clock.advance(60_001);
    expect((await postLead(server, lead({ client_ip: '203.0.113.70' }))).status).toBe(201);
  });
});

describe('step 9: hourly limit', () => {
  it('over LEADS_HOURLY_LIMIT per hour: 429 (why: hourly) and one admin alert per hour, even across a restart', async () => {
    const clock = new FakeClock();
    await boot({ LEADS_HOURLY_LIMIT: '3' }, clock);
    let alerts = watchAlerts(server);
    for (let i = 0; i < 3; i += 1) expect((await postLead(server, lead())).status).toBe(201);
    const limited = await postLead(server, lead());
    expect(limited).toMatchObject({ status: 429, body: { error: 'rate_limited', why: 'hourly' } });
    expect(Number(limited.headers.get('retry-after'))).toBe(3600);
    expect(await alerts()).toEqual([{ key: 'hourly_limit', result: 'sent' }]);
    expect(sandbox.messages(ADMIN_CHAT)).toHaveLength(1);
    expect(sandbox.messages(ADMIN_CHAT)[0].text).toContain('Лимит заявок');

    expect((await postLead(server, lead())).status).toBe(429);
    expect(await alerts()).toEqual([
      { key: 'hourly_limit', result: 'sent' },
      { key: 'hourly_limit', result: 'throttled' },
    ]);
    const dbPath = server.config.databasePath;
    await server.close();
    clock.advance(30 * MIN);
    server = await start({ dbPath, sandbox, clock, env: { LEADS_HOURLY_LIMIT: '3' } });
    alerts = watchAlerts(server);
    expect((await postLead(server, lead())).status).toBe(429);
    // Waits for the decision instead of sleeping: a throttle lost in the restart would come to 'sent', a second message.
    expect(await alerts()).toEqual([{ key: 'hourly_limit', result: 'throttled' }]);
    expect(sandbox.messages(ADMIN_CHAT)).toHaveLength(1);

    clock.advance(31 * MIN);
    expect((await postLead(server, lead())).status).toBe(201);
  });

  it('a failed alert is tried again at the next limited request', async () => {
    await boot({ LEADS_HOURLY_LIMIT: '1' });
    const alerts = watchAlerts(server);
    await postLead(server, lead());
    sandbox.inject({ method: 'sendMessage', kind: 'server_error', count: 1, chat_id: ADMIN_CHAT });
    expect((await postLead(server, lead())).status).toBe(429);
    expect(await alerts()).toEqual([{ key: 'hourly_limit', result: 'failed' }]);
    expect(sandbox.callsOf('sendMessage').filter((c) => String(c.params.chat_id) === String(ADMIN_CHAT))).toHaveLength(1);
    expect(server.logger.lines.filter((l) => l.includes('alert hourly_limit failed'))).toHaveLength(1);
    expect(sandbox.messages(ADMIN_CHAT)).toHaveLength(0);
    expect((await postLead(server, lead())).status).toBe(429);
    expect(await alerts()).toEqual([
      { key: 'hourly_limit', result: 'failed' },
      { key: 'hourly_limit', result: 'sent' },
    ]);
    expect(sandbox.messages(ADMIN_CHAT)).toHaveLength(1);
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
    expect(again.body).toEqual({ lead_number: created.body.lead_number, duplicate: true, repeat: true });
    const stored = await row('select changes from lead_repeats where lead_id = ?', created.body.lead_number);
    expect(JSON.parse(stored!.changes)).toEqual({ phone: '+79990001122', guests: '45', date: '1 марта' });
    expect(await row('select count(*) as n from leads')).toEqual({ n: 1 });
  });

  it('the same phone within 24 h is a repeat; after 24 h it is a new lead', async () => {
    const clock = new FakeClock();
    await boot({}, clock);
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
    await boot({}, clock);
    const a = await postLead(server, lead({ telegram: '@shared_name', phone: '+12025550101' }));
    clock.advance(MIN);
    const b = await postLead(server, lead({ telegram: '@other_name', phone: '+12025550102' }));
    clock.advance(MIN);
    const r = await postLead(server, lead({ telegram: '@shared_name', phone: '+12025550102' }));
    expect(r.body.lead_number).toBe(b.body.lead_number);
    expect(a.body.lead_number).not.toBe(b.body.lead_number);
  });
});
