/**
 * The landing's captcha as the server sees it (docs/requirements.md §8.8), through the real app and the Telegram
 * sandbox: `captcha` of POST /leads (`passed` or `unchecked`) is checked by the shared rules and stored with the lead
 * (a repeat keeps its own); an unchecked captcha puts a warning line on the card; `GET /leads` and the CSV show it.
 */
import { ru } from '../src/i18n/ru';
import { FakeClock, LEADS_CHAT, SECRET, lead, postLead, publishLead, type TestServer, sandboxSuite } from './harness';
import { sqlRow } from './support/test-database';

const suite = sandboxSuite();
const { sandbox } = suite;
let server: TestServer;
const boot = async () => (server = await suite.boot({ clock: new FakeClock() }));
const cardOf = (id: number) => sandbox.messages(LEADS_CHAT).find((m) => m.text.startsWith(`🆕 Заявка #${id}\n`));
const get = (path: string) => fetch(`${server.url}${path}`, { headers: { 'X-Stickers-Leads-Secret': SECRET } });

describe('captcha on the card and in the database', () => {
  it('unchecked: stored, and the card says under its time that the captcha could not be checked', async () => {
    await boot();
    const res = await publishLead(server, { captcha: 'unchecked' });
    expect(res.status).toBe(201);
    const id = res.body.lead_number as number;
    expect(cardOf(id)!.text.split('\n').slice(1, 3)).toEqual(['🕒 29.11.2026 12:00', ru.card.captchaUnchecked]);
    expect(await sqlRow(server.db, 'select captcha from leads where id = ?', id)).toEqual({ captcha: 'unchecked' });
  });

  it('passed, or no captcha at all: stored as sent (null without), and no line on the card', async () => {
    await boot();
    const passed = (await publishLead(server, { captcha: 'passed' })).body.lead_number as number;
    const none = (await publishLead(server)).body.lead_number as number;
    for (const id of [passed, none]) {
      expect(cardOf(id)!.text).not.toContain('Капча');
      expect(cardOf(id)!.text.split('\n')[2]).toBe('Имя: Анна Ким');
    }
    expect(await sqlRow(server.db, 'select captcha from leads where id = ?', passed)).toEqual({ captcha: 'passed' });
    expect(await sqlRow(server.db, 'select captcha from leads where id = ?', none)).toEqual({ captcha: null });
  });

  it('a repeat keeps its own captcha; the card keeps the lead’s', async () => {
    await boot();
    const first = lead({ captcha: 'passed' });
    const id = (await postLead(server, first)).body.lead_number as number;
    await server.outbox.whenIdle();
    const again = await postLead(server, lead({ phone: first.phone, telegram: first.telegram, captcha: 'unchecked' }));
    expect(again.body).toMatchObject({ lead_number: id, repeat: true });
    await server.outbox.whenIdle();
    expect(await sqlRow(server.db, 'select captcha from lead_repeats where lead_id = ?', id)).toEqual({ captcha: 'unchecked' });
    expect(cardOf(id)!.text).not.toContain(ru.card.captchaUnchecked);
  });
});

describe('an invalid captcha value', () => {
  it.each([
    ['an unknown word', 'failed'],
    ['a token instead of the result', 'XXXX.DUMMY.TOKEN'],
    ['not text', true],
    ['upper case', 'PASSED'],
  ])('%s → 422 errors.captcha = invalid, nothing stored', async (_what, captcha) => {
    await boot();
    const res = await postLead(server, lead({ captcha, phone: 'x' }));
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ error: 'invalid', errors: { phone: 'invalid', captcha: 'invalid' } });
    expect(await sqlRow(server.db, 'select count(*) as n from leads')).toEqual({ n: 0 });
  });
});

describe('the export shows it', () => {
  it('GET /leads: captcha per lead (null without); the CSV: a captcha column, last', async () => {
    await boot();
    const unchecked = (await publishLead(server, { captcha: 'unchecked' })).body.lead_number as number;
    const passed = (await publishLead(server, { captcha: 'passed' })).body.lead_number as number;
    const none = (await publishLead(server)).body.lead_number as number;

    const page = (await (await get('/leads')).json()) as { leads: { lead_number: number; captcha: string | null }[] };
    const byNumber = new Map(page.leads.map((l) => [l.lead_number, l.captcha]));
    expect([byNumber.get(unchecked), byNumber.get(passed), byNumber.get(none)]).toEqual(['unchecked', 'passed', null]);

    const csv = (await (await get('/leads/export.csv')).text()).replace(/^\uFEFF/, '').split('\r\n');
    const header = csv[0].split(',');
    expect(header[header.length - 1]).toBe('captcha');
    const captchaOf = (id: number) =>
      csv
        .find((line) => line.startsWith(`${id},`))!
        .split(',')
        .pop();
    expect([captchaOf(unchecked), captchaOf(passed), captchaOf(none)]).toEqual(['unchecked', 'passed', '']);
  });
});
