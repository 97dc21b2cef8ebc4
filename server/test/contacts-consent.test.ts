/**
 * Which contacts a lead must have (LEADS_REQUIRED_CONTACTS) and the visitor's consent, through the real app, a real
 * database (SQLite, or PostgreSQL with LEADS_TEST_DATABASE=postgres) and the Telegram sandbox: a lead with one contact
 * is stored, published, repeated by what it has (never by two missing contacts), exported and erased; the `consent`
 * object is checked, stored with the lead, shown by GET /leads, the CSV, the trace and the card, and kept through erasure.
 */
import { loadServerConfig } from '../src/config/config';
import { formatTrace } from '../src/trace/trace-format';
import {
  FakeClock,
  LEADS_CHAT,
  SECRET,
  lead,
  memberActions,
  postLead,
  sandboxSuite,
  type BootOptions,
  type TestServer,
  TELEGRAM_LINK,
} from './harness';
import { sqlRow } from './support/test-database';

const suite = sandboxSuite();
const { sandbox } = suite;
const { command } = memberActions(sandbox);
const boot = (options: BootOptions = {}): Promise<TestServer> => suite.boot({ clock: new FakeClock(), ...options });

/** Posts a lead built from `lead()` without the contacts named in `drop`; waits for its publish attempt. */
async function post(server: TestServer, overrides: Record<string, unknown>, drop: ('telegram' | 'phone')[] = []) {
  const body = lead(overrides);
  for (const f of drop) delete body[f];
  const res = await postLead(server, body);
  await server.outbox.whenIdle();
  return res;
}

const cardOf = (id: number) => sandbox.messages(LEADS_CHAT).find((m) => m.text.startsWith(`🆕 Заявка #${id}\n`));
const get = async (server: TestServer, path: string) => {
  const res = await fetch(`${server.url}${path}`, { headers: { 'X-Stickers-Leads-Secret': SECRET } });
  return { status: res.status, text: await res.text() };
};
const listed = async (server: TestServer, id: number) =>
  (JSON.parse((await get(server, '/leads?limit=200')).text).leads as any[]).find((l) => l.lead_number === id);
/** The CSV as objects by header (no value in these tests holds a comma or a quote). */
async function csvRows(server: TestServer): Promise<Record<string, string>[]> {
  const [header, ...lines] = (await get(server, '/leads/export.csv')).text
    .replace(/^\uFEFF/, '')
    .trim()
    .split(/\r?\n/);
  const names = header.split(',');
  return lines.map((l) => Object.fromEntries(l.split(',').map((v, i) => [names[i], v])));
}

const POLICY = 'https://stickers.example/privacy';

describe('LEADS_REQUIRED_CONTACTS', () => {
  it('reads telegram,phone (default, either order), telegram, phone and any; anything else is one config line', () => {
    expect(loadServerConfig({}).leads.requiredContacts).toBe('telegram,phone');
    expect(loadServerConfig({ LEADS_REQUIRED_CONTACTS: ' Phone, telegram ' }).leads.requiredContacts).toBe('telegram,phone');
    for (const v of ['telegram', 'phone', 'any'] as const)
      expect(loadServerConfig({ LEADS_REQUIRED_CONTACTS: v }).leads.requiredContacts).toBe(v);
    for (const bad of ['email', 'telegram,email', 'any,phone', 'telegram,phone,any']) {
      expect(() => loadServerConfig({ LEADS_REQUIRED_CONTACTS: bad })).toThrow(/LEADS_REQUIRED_CONTACTS must be telegram,phone/);
    }
    expect(() => loadServerConfig({ LEADS_REQUIRE_CONSENT: 'maybe' })).toThrow(/LEADS_REQUIRE_CONSENT must be 1 or 0/);
  });

  it('the default still requires both: a lead without a phone is a 422', async () => {
    const server = await boot();
    const res = await post(server, {}, ['phone']);
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual({ phone: 'required' });
  });

  it('phone: the username may be left out, the phone may not', async () => {
    const server = await boot({ env: { LEADS_REQUIRED_CONTACTS: 'phone' } });
    const ok = await post(server, {}, ['telegram']);
    expect(ok.status).toBe(201);
    expect(cardOf(ok.body.lead_number)!.text).not.toContain('Telegram:');
    expect((await post(server, {}, ['phone'])).body.errors).toEqual({ phone: 'required' });
  });

  it('any: a telegram-only and a phone-only lead are stored, published, listed and exported with what they have', async () => {
    const server = await boot({ env: { LEADS_REQUIRED_CONTACTS: 'any' } });
    const tg = await post(server, { telegram: '@only_telegram_1' }, ['phone']);
    const ph = await post(server, { phone: '+7 916 555-12-01' }, ['telegram']);
    expect([tg.status, ph.status]).toEqual([201, 201]);
    const tgCard = cardOf(tg.body.lead_number)!.text;
    expect(tgCard).toContain('Telegram: @only_telegram_1');
    expect(tgCard).not.toContain('Телефон:');
    const phCard = cardOf(ph.body.lead_number)!.text;
    expect(phCard).toContain('Телефон: +7 916 555 12 01');
    expect(phCard).not.toContain('Telegram:');
    expect(
      sandbox
        .messages(LEADS_CHAT)
        .find((m) => m.text === phCard)!
        .reply_markup?.inline_keyboard.flat()
        .some((b) => 'url' in b),
    ).toBe(false);
    expect(await listed(server, tg.body.lead_number)).toMatchObject({ telegram: '@only_telegram_1', phone: null });
    expect(await listed(server, ph.body.lead_number)).toMatchObject({ telegram: null, phone: '+79165551201' });
    const rows = await csvRows(server);
    expect(rows.find((r) => r.number === String(ph.body.lead_number))).toMatchObject({ telegram: '', phone: "'+79165551201" });
    expect(await sqlRow(server.db, 'select telegram, telegram_key, phone from leads where id = ?', ph.body.lead_number)).toEqual({
      telegram: null,
      telegram_key: null,
      phone: '+79165551201',
    });
  });

  it('any: neither contact is required on both fields; a malformed one is still invalid', async () => {
    const server = await boot({ env: { LEADS_REQUIRED_CONTACTS: 'any' } });
    const none = await post(server, { telegram: '  ', phone: '' });
    expect(none.status).toBe(422);
    expect(none.body.errors).toEqual({ telegram: 'required', phone: 'required' });
    expect((await post(server, { telegram: '@ab' }, ['phone'])).body.errors).toEqual({ telegram: 'invalid' });
    expect((await post(server, { phone: '12' }, ['telegram'])).body.errors).toEqual({ phone: 'invalid' });
  });

  it('any: a phone-only lead is repeated by its phone; two leads without a username are not the same person', async () => {
    const server = await boot({ env: { LEADS_REQUIRED_CONTACTS: 'any' } });
    const first = await post(server, { phone: '+79165551202', comment: 'первый' }, ['telegram']);
    const again = await post(server, { phone: '8 916 555-12-02', comment: 'второй' }, ['telegram']);
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ lead_number: first.body.lead_number, duplicate: true, repeat: true, telegram_link: TELEGRAM_LINK });
    // Another phone-only visitor: both have no username, and that is no match.
    const other = await post(server, { phone: '+79165551203' }, ['telegram']);
    expect(other.status).toBe(201);
    // Two telegram-only visitors: both have no phone.
    const a = await post(server, { telegram: '@only_tg_a1' }, ['phone']);
    const b = await post(server, { telegram: '@only_tg_b1' }, ['phone']);
    expect([a.status, b.status]).toEqual([201, 201]);
    await server.outbox.whenIdle();
    expect(cardOf(first.body.lead_number)!.text).toContain('🔁 Повторное обращение');
    expect(cardOf(first.body.lead_number)!.text).toContain('Комментарий: второй');
  });

  it('any: /stickers_forget erases a phone-only lead and its repeat, and a telegram-only lead by its username', async () => {
    const server = await boot({ env: { LEADS_REQUIRED_CONTACTS: 'any' }, polling: true });
    const ph = (await post(server, { phone: '+79165551204', name: 'Стираемый Телефон' }, ['telegram'])).body.lead_number;
    await post(server, { phone: '+79165551204', comment: 'повтор' }, ['telegram']);
    const tg = (await post(server, { telegram: '@erase_only_tg', name: 'Стираемый Ник' }, ['phone'])).body.lead_number;
    expect(await command(LEADS_CHAT, '/stickers_forget +7 916 555-12-04')).toContain(`#${ph}`);
    expect(await command(LEADS_CHAT, '/stickers_forget @Erase_Only_Tg')).toContain(`#${tg}`);
    await server.outbox.whenIdle();
    for (const id of [ph, tg]) {
      expect(await sqlRow(server.db, 'select name, telegram, phone, comment from leads where id = ?', id)).toEqual({
        name: null,
        telegram: null,
        phone: null,
        comment: null,
      });
      expect(cardOf(id)!.text).toContain('🗑 Личные данные удалены');
    }
  });
});

describe('consent', () => {
  const consentAt = (server: TestServer, ms = 0) => new Date(server.clock.now() + ms).toISOString();

  it('is stored with the lead and shown by GET /leads, the CSV, the trace and the card; a lead without has null', async () => {
    const server = await boot();
    const at = consentAt(server, -3000);
    const res = await post(server, { consent: { accepted_at: at, policy_url: POLICY } });
    expect(res.status).toBe(201);
    const id = res.body.lead_number as number;
    const without = (await post(server, {})).body.lead_number as number;
    expect(await sqlRow(server.db, 'select consent_accepted_at, consent_policy_url from leads where id = ?', id)).toEqual({
      consent_accepted_at: Date.parse(at),
      consent_policy_url: POLICY,
    });
    expect((await listed(server, id)).consent).toEqual({ accepted_at: at, policy_url: POLICY });
    expect((await listed(server, without)).consent).toBeNull();
    const rows = await csvRows(server);
    expect(rows.find((r) => r.number === String(id))).toMatchObject({ consent_accepted_at: at, consent_policy_url: POLICY });
    expect(rows.find((r) => r.number === String(without))).toMatchObject({ consent_accepted_at: '', consent_policy_url: '' });
    const trace = JSON.parse((await get(server, `/leads/${id}/trace`)).text);
    expect(trace.lead.consent).toEqual({ accepted_at: Date.parse(at), policy_url: POLICY });
    expect(formatTrace(trace)).toContain(`consent       accepted ${at}, policy ${POLICY}`);
    expect(cardOf(id)!.text).toContain('☑️ Согласие на обработку данных: 11:59');
    expect(cardOf(without)!.text).not.toContain('Согласие');
  });

  it('anything but {accepted_at, policy_url} with a real time and an http(s) URL is 422 errors.consent = invalid', async () => {
    const server = await boot();
    const now = consentAt(server);
    const bad: unknown[] = [
      'yes',
      true,
      [now, POLICY],
      {},
      { accepted_at: now },
      { accepted_at: now, policy_url: POLICY, extra: 1 },
      // Names an object's prototype has are keys like any other.
      { accepted_at: now, policy_url: POLICY, toString: 'x' },
      { accepted_at: now, policy_url: POLICY, hasOwnProperty: 1 },
      { accepted_at: '2026-02-30T10:00:00Z', policy_url: POLICY },
      { accepted_at: consentAt(server, 60 * 60_000), policy_url: POLICY },
      { accepted_at: consentAt(server, -40 * 24 * 60 * 60_000), policy_url: POLICY },
      { accepted_at: now, policy_url: 'javascript:alert(1)' },
      { accepted_at: now, policy_url: 'ftp://stickers.example/p' },
      { accepted_at: now, policy_url: `https://stickers.example/${'p'.repeat(600)}` },
      { accepted_at: now, policy_url: 'https://stickers.example/a b' },
    ];
    for (const consent of bad) {
      const res = await postLead(server, lead({ consent }));
      expect({ consent, status: res.status, errors: res.body.errors }).toEqual({ consent, status: 422, errors: { consent: 'invalid' } });
    }
    // Keys named __proto__, prototype and constructor leave every body before it is checked (the framework's guard).
    const guarded = await postLead(server, lead({ consent: { accepted_at: now, policy_url: POLICY, constructor: 1, prototype: 2 } }));
    expect(guarded.status).toBe(201);
    // A landing clock a minute ahead is taken as the server's now.
    const ahead = await postLead(server, lead({ consent: { accepted_at: consentAt(server, 60_000), policy_url: POLICY } }));
    expect(ahead.status).toBe(201);
    expect(
      (await sqlRow(server.db, 'select consent_accepted_at from leads where id = ?', ahead.body.lead_number))!.consent_accepted_at,
    ).toBe(server.clock.now());
  });

  it('LEADS_REQUIRE_CONSENT=1: a lead without consent is 422 errors.consent = required, with the other errors', async () => {
    const server = await boot({ env: { LEADS_REQUIRE_CONSENT: '1' } });
    const res = await postLead(server, lead({ name: 'А' }));
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual({ name: 'too_short', consent: 'required' });
    expect((await postLead(server, lead({ consent: null }))).body.errors).toEqual({ consent: 'required' });
    expect((await postLead(server, lead({ consent: { accepted_at: consentAt(server), policy_url: POLICY } }))).status).toBe(201);
  });

  it('a repeat keeps its own consent; the lead keeps the first', async () => {
    const server = await boot();
    const first = consentAt(server, -1000);
    const id = (await post(server, { phone: '+79165551205', consent: { accepted_at: first, policy_url: POLICY } })).body.lead_number;
    server.clock.advance(60_000);
    const second = consentAt(server);
    const again = await post(server, { phone: '+79165551205', consent: { accepted_at: second, policy_url: `${POLICY}/v2` } });
    expect(again.body).toMatchObject({ lead_number: id, repeat: true });
    expect((await listed(server, id)).consent).toEqual({ accepted_at: first, policy_url: POLICY });
    const trace = JSON.parse((await get(server, `/leads/${id}/trace`)).text);
    expect(trace.repeats[0].consent).toEqual({ accepted_at: Date.parse(second), policy_url: `${POLICY}/v2` });
  });

  it('erasure keeps the fact and time of consent and of erasure, and nothing personal', async () => {
    const server = await boot({ polling: true });
    const at = consentAt(server, -2000);
    const id = (await post(server, { name: 'Согласная Анна', consent: { accepted_at: at, policy_url: POLICY } })).body.lead_number;
    expect(await command(LEADS_CHAT, `/stickers_forget ${id}`)).toContain('обезличена');
    await server.outbox.whenIdle();
    const shown = await listed(server, id);
    expect(shown).toMatchObject({
      name: null,
      telegram: null,
      phone: null,
      comment: null,
      consent: { accepted_at: at, policy_url: POLICY },
    });
    expect(shown.anonymised_at).toBe(new Date(server.clock.now()).toISOString());
    const row = (await csvRows(server)).find((r) => r.number === String(id))!;
    expect(row).toMatchObject({ name: '', telegram: '', phone: '', consent_accepted_at: at, consent_policy_url: POLICY });
    const card = cardOf(id)!.text;
    expect(card).toContain('🗑 Личные данные удалены');
    expect(card).toContain('☑️ Согласие на обработку данных');
    expect(card).not.toContain('Согласная Анна');
  });
});
