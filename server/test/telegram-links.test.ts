/**
 * "Continue in Telegram": `POST /leads` answers with `telegram_link` (https://t.me/<bot>?start=<payload>), a fresh
 * payload each answer, bound to the lead the answer names; `/start <payload>` in the bot's private chat binds the
 * visitor's Telegram account to that lead once, the card shows it, GET /leads and the trace too; an unknown, expired or
 * used payload binds nothing and gets a polite answer. Against the sandbox's private chat, on both databases.
 */
import type { SandboxUser } from '@stickers/telegram-sandbox';
import { SECRET_HEADER } from '@stickers/shared';
import { LEADS_CHAT, lead, memberActions, postLead, sandboxSuite, SECRET, type TestServer } from './harness';

const VISITOR: SandboxUser = { id: 7001, is_bot: false, first_name: 'Анна', last_name: 'Ким', username: 'anna_k' };
const OTHER: SandboxUser = { id: 7002, is_bot: false, first_name: 'Олег' };
const DAY_MS = 24 * 60 * 60 * 1000;
const LINK = /^https:\/\/t\.me\/stickers_leads_bot\?start=([A-Za-z0-9_-]{1,64})$/;

const { sandbox, boot } = sandboxSuite((s) => {
  s.state.addChat({ id: VISITOR.id, type: 'private', title: 'Анна' });
  s.state.addChat({ id: OTHER.id, type: 'private', title: 'Олег' });
});

const payloadOf = (link: unknown): string => {
  const m = LINK.exec(String(link));
  if (!m) throw new Error(`not a telegram link: ${String(link)}`);
  return m[1];
};

/** The lead's card in the leads group as it reads now. */
const cardOf = (leadNumber: number) =>
  sandbox.messages(LEADS_CHAT).find((m) => m.from.is_bot && m.text.includes(`#${leadNumber}`))?.text ?? '';

async function cardsSettled(server: TestServer): Promise<void> {
  await server.outbox.tick();
  await server.outbox.whenIdle();
}

describe('POST /leads: telegram_link', () => {
  it('a new lead, its duplicate and a repeat each get a fresh link, every one to the same lead', async () => {
    const server = await boot();
    const body = lead({ telegram: '@anna_k' });
    const created = await postLead(server, body);
    expect(created.status).toBe(201);
    const duplicate = await postLead(server, body);
    expect(duplicate.body).toMatchObject({ lead_number: created.body.lead_number, duplicate: true });
    const repeat = await postLead(server, lead({ telegram: '@anna_k', phone: body.phone }));
    expect(repeat.body).toMatchObject({ lead_number: created.body.lead_number, repeat: true });
    const payloads = [created, duplicate, repeat].map((a) => payloadOf(a.body.telegram_link));
    expect(new Set(payloads).size).toBe(3);
    const rows = await server.db.db.selectFrom('telegram_links').select(['lead_id', 'payload_hash', 'expires_at', 'created_at']).execute();
    expect(rows.map((r) => r.lead_id)).toEqual([created.body.lead_number, created.body.lead_number, created.body.lead_number]);
    // Only a hash is stored, and each link lasts LEADS_TELEGRAM_LINK_DAYS (7 by default).
    for (const p of payloads) expect(rows.map((r) => r.payload_hash)).not.toContain(p);
    for (const r of rows) expect(r.expires_at - r.created_at).toBe(7 * DAY_MS);
  });

  it('null with LEADS_TELEGRAM_LINK_DAYS=0, and without a bot', async () => {
    const off = await boot({ env: { LEADS_TELEGRAM_LINK_DAYS: '0' } });
    expect((await postLead(off, lead())).body).toMatchObject({ telegram_link: null });
    await off.close();
    const noBot = await boot({ sandbox: undefined });
    expect((await postLead(noBot, lead())).body).toMatchObject({ telegram_link: null });
  });
});

describe('/start <payload> in the private chat', () => {
  it("binds the visitor's account once: the bot answers with the lead's number, the card, GET /leads and the trace show it; an erasure erases it", async () => {
    const server = await boot({ polling: true });
    const body = lead({ telegram: '@anna_k' });
    const created = await postLead(server, body);
    const leadNumber = created.body.lead_number as number;
    await cardsSettled(server);
    expect(cardOf(leadNumber)).not.toContain('Telegram подтверждён');

    const { command } = memberActions(sandbox);
    server.clock.advance(60_000);
    const bindingTime = new Date(server.clock.now()).toISOString();
    const answer = await command(VISITOR.id, `/start ${payloadOf(created.body.telegram_link)}`, VISITOR);
    expect(answer).toContain(`#${leadNumber}`);
    await cardsSettled(server);
    expect(cardOf(leadNumber)).toContain('✅ Telegram подтверждён: @anna_k');
    expect(cardOf(leadNumber)).not.toContain('не совпадает');

    // A CRM syncing by updated_since gets the account: the binding is a change of the lead.
    const listed = await fetch(`${server.url}/leads?updated_since=${bindingTime}`, { headers: { [SECRET_HEADER]: SECRET } });
    const page = (await listed.json()) as { leads: { lead_number: number; telegram_account: unknown; updated_at: string }[] };
    expect(page.leads.find((l) => l.lead_number === leadNumber)).toMatchObject({
      telegram_account: { id: VISITOR.id, username: 'anna_k', first_name: 'Анна', last_name: 'Ким' },
      updated_at: bindingTime,
    });

    const traced = await fetch(`${server.url}/leads/${body.request_id as string}/trace`, { headers: { [SECRET_HEADER]: SECRET } });
    expect(traced.status).toBe(200);
    const trace = (await traced.json()) as { events: { kind: string; detail: string | null }[] };
    expect(trace.events).toContainEqual(
      expect.objectContaining({ kind: 'telegram_bound', detail: expect.stringContaining('Telegram account is bound') }),
    );

    // Erased with the lead: the account is gone from the database, the card and the list; the link stays used.
    expect(await command(LEADS_CHAT, `/stickers_forget ${leadNumber}`)).toContain(`Заявка #${leadNumber} обезличена`);
    await cardsSettled(server);
    expect(cardOf(leadNumber)).not.toContain('Telegram подтверждён');
    const rows = await server.db.db.selectFrom('telegram_links').selectAll().where('lead_id', '=', leadNumber).execute();
    expect(rows.map((r) => [r.tg_user_id, r.tg_username, r.tg_first_name, r.tg_last_name, r.used_at === null])).toEqual([
      [null, null, null, null, false],
    ]);
    expect(await command(OTHER.id, `/start ${payloadOf(created.body.telegram_link)}`, OTHER)).toContain('Эта ссылка не работает');
  });

  it('says so on the card when the account is not the username typed in the form', async () => {
    const server = await boot({ polling: true });
    const created = await postLead(server, lead({ telegram: '@someone_else' }));
    await cardsSettled(server);
    await memberActions(sandbox).command(VISITOR.id, `/start ${payloadOf(created.body.telegram_link)}`, VISITOR);
    await cardsSettled(server);
    expect(cardOf(created.body.lead_number)).toContain(
      '✅ Telegram подтверждён: @anna_k ⚠️ не совпадает с указанным в заявке (@someone_else)',
    );
  });

  it('/stickers_forget by username also erases the leads whose bound account has it, whatever the form said', async () => {
    const server = await boot({ polling: true });
    const created = await postLead(server, lead({ telegram: '@anna_typo', phone: '+79990001122' }));
    const other = await postLead(server, lead({ telegram: '@boris_b', phone: '+79990001133' }));
    const { command } = memberActions(sandbox);
    await command(VISITOR.id, `/start ${payloadOf(created.body.telegram_link)}`, VISITOR);
    expect(await command(LEADS_CHAT, '/stickers_forget @Anna_K')).toContain(`Обезличено заявок: 1 (#${created.body.lead_number})`);
    const rows = await server.db.db.selectFrom('leads').select(['id', 'anonymised_at']).orderBy('id').execute();
    expect(rows.map((r) => [r.id, r.anonymised_at !== null])).toEqual([
      [created.body.lead_number, true],
      [other.body.lead_number, false],
    ]);
  });

  it('an unknown, an expired and a used payload bind nothing and get the polite answer', async () => {
    const server = await boot({ polling: true });
    const { command } = memberActions(sandbox);
    const polite = 'Эта ссылка не работает: она устарела или уже была использована.';

    expect(await command(OTHER.id, '/start AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', OTHER)).toContain(polite);

    const used = await postLead(server, lead());
    expect(await command(VISITOR.id, `/start ${payloadOf(used.body.telegram_link)}`, VISITOR)).toContain(`#${used.body.lead_number}`);
    expect(await command(OTHER.id, `/start ${payloadOf(used.body.telegram_link)}`, OTHER)).toContain(polite);

    const expiring = await postLead(server, lead());
    server.clock.advance(7 * DAY_MS);
    expect(await command(OTHER.id, `/start ${payloadOf(expiring.body.telegram_link)}`, OTHER)).toContain(polite);

    const bound = await server.db.db
      .selectFrom('telegram_links')
      .select(['lead_id', 'tg_user_id'])
      .where('used_at', 'is not', null)
      .execute();
    expect(bound).toEqual([{ lead_id: used.body.lead_number, tg_user_id: VISITOR.id }]);
    const events = await server.db.db.selectFrom('lead_events').select('lead_id').where('kind', '=', 'telegram_bound').execute();
    expect(events).toEqual([{ lead_id: used.body.lead_number }]);
  });

  it("a duplicate of an erased lead's request gets telegram_link null: a link to it could never bind", async () => {
    const server = await boot({ polling: true });
    const { command } = memberActions(sandbox);
    const body = lead({ telegram: '@anna_k' });
    const created = await postLead(server, body);
    const leadNumber = created.body.lead_number as number;
    expect(await command(LEADS_CHAT, `/stickers_forget ${leadNumber}`)).toContain(`Заявка #${leadNumber} обезличена`);

    const again = await postLead(server, body);
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ lead_number: leadNumber, duplicate: true, repeat: false, telegram_link: null });
    const links = await server.db.db.selectFrom('telegram_links').select('lead_id').where('lead_id', '=', leadNumber).execute();
    expect(links).toHaveLength(1);
  });

  it("an erased lead's unused payload binds nothing: no account is stored on it, and the visitor gets the polite answer", async () => {
    const server = await boot({ polling: true });
    const { command } = memberActions(sandbox);
    const created = await postLead(server, lead({ telegram: '@anna_k' }));
    const leadNumber = created.body.lead_number as number;
    expect(await command(LEADS_CHAT, `/stickers_forget ${leadNumber}`)).toContain(`Заявка #${leadNumber} обезличена`);

    expect(await command(VISITOR.id, `/start ${payloadOf(created.body.telegram_link)}`, VISITOR)).toContain('Эта ссылка не работает');
    const rows = await server.db.db.selectFrom('telegram_links').selectAll().where('lead_id', '=', leadNumber).execute();
    expect(rows.map((r) => [r.tg_user_id, r.tg_username, r.tg_first_name, r.tg_last_name, r.used_at])).toEqual([
      [null, null, null, null, null],
    ]);
    const kinds = await server.db.db.selectFrom('lead_events').select('kind').where('lead_id', '=', leadNumber).execute();
    expect(kinds.map((e) => e.kind)).not.toContain('telegram_bound');
  });
});
