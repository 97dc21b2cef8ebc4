/**
 * With LEADS_CARD_PII=0 the UTM values are personal (free text of the page's URL, domain/personal-fields.ts) and the
 * card shows the landing only; the reports — the daily digest and /stickers_stats — count per landing only too, so a
 * visitor-typed `utm_campaign` (an e-mail address) reaches no chat.
 */
import { HousekeepingService } from '../src/housekeeping/housekeeping.service';
import { ADMIN_CHAT, LEADS_CHAT, memberActions, publishLead, sandboxSuite, type BootOptions } from './harness';

const suite = sandboxSuite();
const { sandbox } = suite;
const { command } = memberActions(sandbox);
const boot = (options: BootOptions = {}) => suite.boot(options);

const MAIL = 'anna.k@example.com';

async function sourcedLeads(server: Awaited<ReturnType<typeof boot>>) {
  for (let i = 0; i < 2; i += 1) await publishLead(server, { source: { landing: 'wedding', utm_source: 'mailing', utm_campaign: MAIL } });
  await publishLead(server, { source: { landing: 'wedding', utm_source: 'yandex', utm_campaign: 'summer' } });
  await publishLead(server, { source: { landing: 'corporate' } });
  await publishLead(server, { source: { utm_source: 'vk', utm_term: 'anna' } });
  await publishLead(server);
}

describe('the reports with LEADS_CARD_PII=0 count per landing only', () => {
  it('the daily digest: per landing, no UTM value, the rest without a landing', async () => {
    const server = await boot({ env: { LEADS_CARD_PII: '0' } });
    await sourcedLeads(server);
    expect(await server.app.get(HousekeepingService).digest()).toBe(true);
    const digest = sandbox
      .messages(ADMIN_CHAT)
      .filter((m) => !m.photo)
      .at(-1)!.text;
    expect(digest).toContain('🗓 Сводка за сутки: заявок 6');
    expect(digest).toMatch(/\n📣 По лендингам:\nwedding: 3\ncorporate: 1\nбез лендинга: 2$/);
    for (const utm of [MAIL, 'mailing', 'yandex', 'summer', 'vk']) expect(digest).not.toContain(utm);
  });

  it('/stickers_stats: the same', async () => {
    const server = await boot({ env: { LEADS_CARD_PII: '0' }, polling: true });
    await sourcedLeads(server);
    const reply = await command(LEADS_CHAT, '/stickers_stats');
    expect(reply).toContain(['🔁 Повторных обращений: 0', '📣 По лендингам:', 'wedding: 3', 'corporate: 1', 'без лендинга: 2'].join('\n'));
    for (const utm of [MAIL, 'mailing', 'yandex', 'summer', 'vk']) expect(reply).not.toContain(utm);
  });

  it('with LEADS_CARD_PII=1 (the default) the UTM source and campaign are counted as before', async () => {
    const server = await boot();
    await sourcedLeads(server);
    expect(await server.app.get(HousekeepingService).digest()).toBe(true);
    const digest = sandbox
      .messages(ADMIN_CHAT)
      .filter((m) => !m.photo)
      .at(-1)!.text;
    expect(digest).toContain(`wedding · mailing / ${MAIL}: 2`);
  });
});
