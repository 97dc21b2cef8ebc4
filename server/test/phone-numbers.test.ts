/**
 * Phone numbers as typed (docs/requirements.md §2.2, docs/decisions.md "Phone numbers as typed"), against the real app
 * over HTTP: national spellings of LEADS_PHONE_REGION and international ones are stored as E.164, a repeat is matched
 * across spellings, and the erasure by contact reads the phone the same way.
 */
import { join } from 'node:path';
import { SECRET_HEADER } from '@stickers/shared';
import { ContactHasher } from '../src/anonymisation/contact-hasher';
import { startFromEnv } from '../src/app';
import { forget } from '../src/cli/ops';
import { ConfigError, loadServerConfig } from '../src/config/config';
import {
  FakeClock,
  LEADS_CHAT,
  SALT,
  SECRET,
  lead,
  memberActions,
  postLead,
  sandboxSuite,
  type BootOptions,
  type TestServer,
} from './harness';
import { sqlRow, sqlRows } from './support/test-database';
import { captureConsole } from './support/console';

const suite = sandboxSuite();
const { tmp, sandbox } = suite;
const { command } = memberActions(sandbox);
let n = 0;

const boot = (options: BootOptions = {}): Promise<TestServer> => suite.boot({ clock: new FakeClock(), ...options });

async function listed(server: TestServer): Promise<{ lead_number: number; phone: string | null }[]> {
  const res = await fetch(`${server.url}/leads`, { headers: { [SECRET_HEADER]: SECRET } });
  expect(res.status).toBe(200);
  return ((await res.json()) as { leads: { lead_number: number; phone: string | null }[] }).leads;
}

describe('POST /leads: phone numbers as typed', () => {
  it('8 916 555-12-34 is stored as +79165551234 (GET /leads shows it)', async () => {
    const server = await boot();
    const res = await postLead(server, lead({ phone: '8 916 555-12-34' }));
    expect(res).toMatchObject({ status: 201, body: { duplicate: false, repeat: false } });
    expect(await listed(server)).toEqual([expect.objectContaining({ lead_number: res.body.lead_number, phone: '+79165551234' })]);
    expect(await sqlRow(server.db, 'select phone from leads where id = ?', res.body.lead_number)).toEqual({ phone: '+79165551234' });
  });

  it('one person across spellings: 8 916… then +7 916… (or 007…, or 8 (916)…) is a 200 repeat of the first lead', async () => {
    const server = await boot();
    const first = await postLead(server, lead({ phone: '8 916 555-12-34' }));
    expect(first.status).toBe(201);
    for (const phone of ['+7 916 555-12-34', '0079165551234', '8 (916) 555 12 34', '9165551234']) {
      // Another username each time: only the phone can match.
      const again = await postLead(server, lead({ phone }));
      expect({ phone, ...again }).toMatchObject({
        phone,
        status: 200,
        body: { lead_number: first.body.lead_number, duplicate: true, repeat: true },
      });
    }
    expect(await sqlRow(server.db, 'select count(*) as n from leads')).toEqual({ n: 1 });
    // Its phone is no change: every spelling was the same number.
    const repeats = await sqlRows<{ changes: string }>(server.db, 'select changes from lead_repeats');
    expect(repeats).toHaveLength(4);
    for (const r of repeats) expect(JSON.parse(r.changes)).not.toHaveProperty('phone');
  });

  it('a number that is not valid for its region is 422 phone invalid, and nothing is stored', async () => {
    const server = await boot();
    for (const phone of ['+7 123', '8 000 000-00-00', '+7 916 555-12-345', '8 916 555-12-34 доб. 5']) {
      expect({ phone, ...(await postLead(server, lead({ phone }))) }).toMatchObject({
        phone,
        status: 422,
        body: { error: 'invalid', errors: { phone: 'invalid' } },
      });
    }
    expect(await sqlRow(server.db, 'select count(*) as n from leads')).toEqual({ n: 0 });
  });

  it('LEADS_PHONE_REGION=DE: a German national number is stored in E.164; +7 still means Russia', async () => {
    const server = await boot({ env: { LEADS_PHONE_REGION: 'DE' } });
    expect(server.config.leads.phoneRegion).toBe('DE');
    const de = await postLead(server, lead({ phone: '030 12345678' }));
    const ru = await postLead(server, lead({ phone: '+7 916 555-12-34' }));
    expect([de.status, ru.status]).toEqual([201, 201]);
    expect((await listed(server)).map((l) => l.phone)).toEqual(['+79165551234', '+493012345678']);
  });
});

describe('LEADS_PHONE_REGION', () => {
  it('defaults to RU; a code libphonenumber does not know stops the start with one line', async () => {
    expect(loadServerConfig({}).leads.phoneRegion).toBe('RU');
    expect(loadServerConfig({ LEADS_PHONE_REGION: 'kz' }).leads.phoneRegion).toBe('KZ');
    const env = {
      PORT: '0',
      HOST: '127.0.0.1',
      DATABASE_PATH: join(tmp.dir, 'never.sqlite'),
      LEADS_SECRET: SECRET,
      LEADS_IP_SALT: SALT,
      LEADS_PHONE_REGION: 'XX',
    };
    const failed = await startFromEnv(env).then(
      () => null,
      (err: unknown) => err,
    );
    expect(failed).toBeInstanceOf(ConfigError);
    // main.ts prints each problem as `config error: <problem>`.
    expect((failed as ConfigError).problems.map((p) => `config error: ${p}`)).toEqual([
      'config error: LEADS_PHONE_REGION must be a two-letter country code (ISO 3166) libphonenumber knows, like RU or DE (got "XX")',
    ]);
  });
});

describe('erasure by contact reads the phone as the form does', () => {
  const hasher = ContactHasher.keyed(SALT);

  it('/stickers_forget 8 916 555-12-34 erases the lead sent as +7 916…, recorded under the E.164 hash', async () => {
    const server = await boot({ polling: true });
    const stored = await postLead(server, lead({ phone: '+7 916 555-12-34', name: 'Пётр Стираемый' }));
    const other = await postLead(server, lead({ name: 'Чужая Заявка' }));
    await server.outbox.whenIdle();
    expect(await command(LEADS_CHAT, '/stickers_forget 8 916 555-12-34')).toBe(
      `🗑 Обезличено заявок: 1 (#${stored.body.lead_number}): личные данные удалены, карточки обновлены.`,
    );
    expect(await sqlRow(server.db, 'select phone, name from leads where id = ?', stored.body.lead_number)).toEqual({
      phone: null,
      name: null,
    });
    expect(await sqlRow(server.db, 'select name from leads where id = ?', other.body.lead_number)).toEqual({ name: 'Чужая Заявка' });
    const hashes = (await sqlRows<{ contact_hash: string }>(server.db, 'select contact_hash from erased_contacts')).map(
      (r) => r.contact_hash,
    );
    expect(hashes).toContain(hasher.phone('+79165551234'));
    // Digits alone stay a lead number; that no lead has it, with how to write a phone, since they read as one.
    expect(await command(LEADS_CHAT, '/stickers_forget 89165551234')).toBe(
      'Заявки #89165551234 нет. Если это телефон, напишите его с плюсом или пробелами: /stickers_forget +7 916 555-12-34.',
    );
  });

  it('npm run leads -- forget --phone takes the national spelling too, in LEADS_PHONE_REGION', async () => {
    const dbPath = join(tmp.dir, `phone-cli-${++n}`, 'leads.sqlite');
    const server = await boot({ dbPath });
    const stored = await postLead(server, lead({ phone: '89165551234' }));
    const location = server.config.databaseUrl ?? dbPath;
    const forgetPhone = (phone: string, region?: string) =>
      captureConsole(() => forget(location, '--phone', phone, server.clock.now(), SALT, region));
    const badRegion = await forgetPhone('8 916 555-12-34', 'XX');
    expect(badRegion.result).toBe(2);
    expect(badRegion.error.join('\n')).toContain('LEADS_PHONE_REGION must be a two-letter country code');
    const notPhone = await forgetPhone('8 000 000-00-00');
    expect(notPhone.result).toBe(2);
    expect(notPhone.error.join('\n')).toContain('not a phone: a valid number with + or 00, or national in LEADS_PHONE_REGION (RU)');
    const erased = await forgetPhone('8 (916) 555-12-34', 'RU');
    expect(erased).toMatchObject({ result: 0, error: [] });
    expect(erased.log).toEqual([`🗑 erased 1 lead (#${stored.body.lead_number}); cards are rewritten by the server`]);
    expect(await sqlRow(server.db, 'select phone from leads where id = ?', stored.body.lead_number)).toEqual({ phone: null });
  });
});
