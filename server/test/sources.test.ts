/**
 * Where a lead came from, through the real app and the Telegram sandbox: the `source` object of POST /leads
 * is checked by the shared rules, stored with the lead (and a repeat keeps its own), shown on the card as one short
 * line, counted per source and campaign in /stickers_stats and the daily digest, and shown by the trace.
 */
import { SECRET_HEADER } from '@stickers/shared';
import { AnonymisationService } from '../src/anonymisation/anonymisation.service';
import { HousekeepingService } from '../src/housekeeping/housekeeping.service';
import { formatTrace } from '../src/trace/trace-format';
import {
  ADMIN_CHAT,
  FakeClock,
  LEADS_CHAT,
  SECRET,
  lead,
  memberActions,
  postLead,
  publishLead,
  type BootOptions,
  type TestServer,
  sandboxSuite,
} from './harness';
import { sqlRow } from './support/test-database';

const DAY = 24 * 60 * 60_000;
const suite = sandboxSuite();
const { sandbox } = suite;
const { command } = memberActions(sandbox);
let server: TestServer;
let clock: FakeClock;

const boot = async (options: BootOptions = {}) => (server = await suite.boot({ clock, ...options }));
const WEDDING = { landing: 'wedding', utm_source: 'yandex', utm_medium: 'cpc', utm_campaign: 'summer', referrer: 'yandex.ru' };
const cardOf = (id: number) => sandbox.messages(LEADS_CHAT).find((m) => m.text.startsWith(`🆕 Заявка #${id}\n`));
const trace = async (key: string) => {
  const res = await fetch(`${server.url}/leads/${encodeURIComponent(key)}/trace`, { headers: { 'X-Stickers-Leads-Secret': SECRET } });
  return (await res.json()) as any;
};

beforeEach(() => {
  clock = new FakeClock();
});

describe('source on the card', () => {
  it('a lead with a source: one line under the time, the landing then source / medium / campaign; stored as sent', async () => {
    await boot();
    const res = await publishLead(server, { source: { ...WEDDING, utm_content: 'banner', utm_term: 'свадьба' } });
    expect(res.status).toBe(201);
    const id = res.body.lead_number as number;
    const card = cardOf(id)!;
    expect(card.text.split('\n').slice(1, 3)).toEqual(['🕒 29.11.2026 12:00', '📣 wedding · yandex / cpc / summer']);
    const row = await sqlRow(
      server.db,
      'select source_landing, utm_source, utm_medium, utm_campaign, utm_content, utm_term, source_referrer from leads where id = ?',
      id,
    );
    expect(row).toEqual({
      source_landing: 'wedding',
      utm_source: 'yandex',
      utm_medium: 'cpc',
      utm_campaign: 'summer',
      utm_content: 'banner',
      utm_term: 'свадьба',
      source_referrer: 'yandex.ru',
    });
  });

  it('missing parts are left out; a lead with no source (or an empty one) looks as before', async () => {
    await boot();
    const partial = (await publishLead(server, { source: { utm_source: 'vk', utm_campaign: 'spring' } })).body.lead_number;
    const none = (await publishLead(server)).body.lead_number;
    const empty = (await publishLead(server, { source: { utm_source: ' ', landing: '' } })).body.lead_number;
    expect(cardOf(partial)!.text.split('\n')[2]).toBe('📣 vk / spring');
    for (const id of [none, empty]) {
      expect(cardOf(id)!.text).not.toContain('📣');
      expect(cardOf(id)!.text.split('\n')[2]).toBe('Имя: Анна Ким');
    }
  });

  it('a repeat keeps its own source; the card keeps the lead’s', async () => {
    await boot();
    const first = lead({ source: WEDDING });
    const id = (await postLead(server, first)).body.lead_number as number;
    await server.outbox.whenIdle();
    const again = await postLead(
      server,
      lead({ phone: first.phone, telegram: first.telegram, source: { utm_source: 'vk', utm_campaign: 'spring' } }),
    );
    expect(again.body).toMatchObject({ lead_number: id, repeat: true });
    await server.outbox.whenIdle();
    expect(await sqlRow(server.db, 'select source_landing, utm_source, utm_campaign from lead_repeats where lead_id = ?', id)).toEqual({
      source_landing: null,
      utm_source: 'vk',
      utm_campaign: 'spring',
    });
    expect(cardOf(id)!.text).toContain('📣 wedding · yandex / cpc / summer');
  });
});

describe('an invalid source', () => {
  it.each([
    ['unknown key', { utm_source: 'yandex', gclid: 'abc' }],
    ['a key the prototype of an object has', { utm_source: 'yandex', toString: 'abc' }],
    ['markup', { utm_campaign: '<b>summer</b>' }],
    ['too long', { utm_term: 'x'.repeat(65) }],
    ['not text', { utm_source: 42 }],
    ['not an object', 'yandex'],
    ['a referrer that is not a host', { referrer: 'https://yandex.ru/search' }],
  ])('%s → 422 errors.source = invalid, nothing stored', async (_what, source) => {
    await boot();
    const res = await postLead(server, lead({ source }));
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ error: 'invalid', errors: { source: 'invalid' } });
    expect(await sqlRow(server.db, 'select count(*) as n from leads')).toEqual({ n: 0 });
  });

  it('is named beside the other failing fields', async () => {
    await boot();
    const res = await postLead(server, lead({ phone: 'x', source: { utm_medium: '>' } }));
    expect(res.body).toEqual({ error: 'invalid', errors: { phone: 'invalid', source: 'invalid' } });
  });
});

describe('reports count per source and campaign', () => {
  async function sourcedLeads() {
    for (let i = 0; i < 3; i += 1) await publishLead(server, { source: WEDDING });
    await publishLead(server, { source: { ...WEDDING, utm_campaign: 'winter' } });
    await publishLead(server, { source: { landing: 'corporate' } });
    await publishLead(server);
  }

  it('a source value is shown up to 40 characters as a person counts them: an emoji is one, never cut in half', async () => {
    await boot({ polling: true });
    await publishLead(server, { source: { landing: '🎉'.repeat(30) } });
    await publishLead(server, { source: { landing: 'x', utm_source: '🎉'.repeat(45) } });
    const reply = await command(LEADS_CHAT, '/stickers_stats');
    expect(reply).toContain(`\n${'🎉'.repeat(30)}: 1\n`);
    expect(reply).toContain(`\nx · ${'🎉'.repeat(39)}…: 1\n`);
  });

  it('/stickers_stats: per landing · source / campaign, most first, and the leads without a source', async () => {
    await boot({ polling: true });
    await sourcedLeads();
    const reply = await command(LEADS_CHAT, '/stickers_stats');
    expect(reply).toContain(
      [
        'За 7 дней: 6',
        '🆕 Новая: 6',
        '🛠 В работе: 0',
        '✅ Заказ: 0',
        '❌ Отказ: 0',
        '🚫 Спам: 0',
        '🔁 Повторных обращений: 0',
        '📣 По источникам (лендинг · источник / кампания):',
        'wedding · yandex / summer: 3',
        'corporate: 1',
        'wedding · yandex / winter: 1',
        'без источника: 1',
      ].join('\n'),
    );
  });

  it('the daily digest counts the last day only', async () => {
    await boot();
    await publishLead(server, { source: { utm_source: 'vk', utm_campaign: 'old' } });
    clock.advance(2 * DAY);
    await sourcedLeads();
    expect(await server.app.get(HousekeepingService).digest()).toBe(true);
    const digest = sandbox
      .messages(ADMIN_CHAT)
      .filter((m) => !m.photo)
      .at(-1)!.text;
    expect(digest).toContain('🗓 Сводка за сутки: заявок 6');
    expect(digest).toMatch(
      /📣 По источникам[^\n]*\nwedding · yandex \/ summer: 3\ncorporate: 1\nwedding · yandex \/ winter: 1\nбез источника: 1$/,
    );
    expect(digest).not.toContain('old');
  });

  it('without any source the reports are as before', async () => {
    await boot();
    await publishLead(server);
    expect(await server.app.get(HousekeepingService).digest()).toBe(true);
    expect(sandbox.messages(ADMIN_CHAT).at(-1)!.text).not.toContain('📣');
  });
});

describe('the trace shows the source', () => {
  it('of the lead and of each repeat; a lead without one has no `source`', async () => {
    await boot();
    const first = lead({ source: WEDDING });
    await postLead(server, first);
    const repeat = lead({ phone: first.phone, telegram: first.telegram, source: { landing: 'corporate' } });
    await postLead(server, repeat);
    const plain = lead();
    await postLead(server, plain);
    await server.outbox.whenIdle();

    const story = await trace(first.request_id as string);
    expect(story.lead.source).toEqual(WEDDING);
    expect(story.repeats[0].source).toEqual({ landing: 'corporate' });
    const text = formatTrace(story);
    expect(text).toContain('  source        landing=wedding, utm_source=yandex, utm_medium=cpc, utm_campaign=summer, referrer=yandex.ru');
    expect(text).toContain('      source        landing=corporate');

    const without = await trace(plain.request_id as string);
    expect(Object.keys(without.lead)).not.toContain('source');
    expect(formatTrace(without)).not.toContain('source ');
  });
});

describe('an erased lead', () => {
  it('keeps source.landing, its UTM values and referrer null; a source without a landing becomes null', async () => {
    await boot();
    const wedding = (await postLead(server, lead({ source: WEDDING }))).body.lead_number as number;
    const utmOnly = (await postLead(server, lead({ source: { utm_source: 'yandex' } }))).body.lead_number as number;
    const erasure = server.app.get(AnonymisationService);
    for (const id of [wedding, utmOnly]) expect(await erasure.forget(id)).toBe('done');
    const res = await fetch(`${server.url}/leads`, { headers: { [SECRET_HEADER]: SECRET } });
    const sources = Object.fromEntries(((await res.json()) as any).leads.map((l: any) => [l.lead_number, l.source]));
    const none = { utm_source: null, utm_medium: null, utm_campaign: null, utm_term: null, utm_content: null, referrer: null };
    expect(sources).toEqual({ [wedding]: { landing: 'wedding', ...none }, [utmOnly]: null });
  });
});

describe('/openapi.json', () => {
  it('documents the optional source object and errors.source', async () => {
    await boot();
    const doc = (await (await fetch(`${server.url}/openapi.json`)).json()) as any;
    const request = doc.components.schemas.LeadRequest;
    expect(request.properties.source).toEqual({
      oneOf: [{ $ref: '#/components/schemas/LeadSource' }, { type: 'object', nullable: true, enum: [null] }],
    });
    expect(Object.keys(doc.components.schemas.LeadSource.properties)).toEqual([
      'landing',
      'utm_source',
      'utm_medium',
      'utm_campaign',
      'utm_content',
      'utm_term',
      'referrer',
    ]);
    const invalid = doc.paths['/leads'].post.responses['422'].content['application/json'].schema.oneOf[0];
    expect(Object.keys(invalid.properties.errors.properties)).toContain('source');
  });
});
