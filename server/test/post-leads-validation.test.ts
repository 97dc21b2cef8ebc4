/**
 * `POST /leads` checking and storing the fields (docs/requirements.md §1.1, steps 5 and 7, and §2): each failing
 * field named with its code, the values normalised, and the visitor known by a keyed hash of the address only.
 */
import { createHmac } from 'node:crypto';
import { NO_HOURLY_LIMIT, SALT, lead, postLead, sandboxSuite, type BootOptions, type TestServer } from './harness';
import { sqlRow } from './support/test-database';

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
    await boot({ env: { LEADS_IP_LIMIT: '1' } });
    for (let i = 0; i < 3; i += 1) expect((await postLead(server, lead({ phone: 'x', client_ip: '203.0.113.1' }))).status).toBe(422);
    expect((await postLead(server, lead({ client_ip: '203.0.113.1' }))).status).toBe(201);
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
