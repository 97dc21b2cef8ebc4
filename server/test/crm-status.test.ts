/**
 * `POST /leads/{lead_number}/status`: a CRM writes a status back behind the shared secret, through the same rule as
 * the card's buttons and the inbox (compare-and-set, the changes the card offers, the history row, the card rewritten).
 */
import { SECRET_HEADER } from '@stickers/shared';
import request from 'supertest';
import { FakeClock, LEADS_CHAT, SECRET, publishLead, sandboxSuite, waitFor, type TestServer } from './harness';
import { sqlRow, sqlRows } from './support/test-database';
import { CardService } from '../src/cards/card.service';
import { LeadsRepository } from '../src/repositories/leads.repository';
import { WebhookReceiver } from './support/webhook-receiver';

const suite = sandboxSuite();
const { sandbox } = suite;
let server: TestServer;
let clock: FakeClock;

async function newLead() {
  const id = (await publishLead(server)).body.lead_number as number;
  const card = () =>
    sandbox
      .messages(LEADS_CHAT)
      .filter((m) => m.text.startsWith(`🆕 Заявка #${id}\n`))
      .at(-1);
  await waitFor(() => card(), 5000, `card of #${id}`);
  return { id, card: () => card()! };
}

const setStatus = (id: number | string, body: unknown, secret = SECRET) =>
  request(server.app.getHttpServer())
    .post(`/leads/${id}/status`)
    .set(SECRET_HEADER, secret)
    .set('Content-Type', 'application/json')
    .send(JSON.stringify(body));

beforeEach(async () => {
  clock = new FakeClock();
  server = await suite.boot({ clock });
});

describe('POST /leads/{lead_number}/status', () => {
  it.each([
    ['in the same millisecond', 0],
    ['a millisecond later', 1],
  ])('a change stored while the card is rewritten for the one before (%s): the card ends showing it', async (_, later) => {
    const { id, card } = await newLead();
    // Another request's change commits after the rewrite read the lead, before its edit is sent.
    const cards = server.app.get(CardService);
    const render = cards.cardFor.bind(cards);
    jest.spyOn(cards, 'cardFor').mockImplementationOnce(async (...args) => {
      const won = { leadId: id, from: 'in_progress' as const, to: 'won' as const, userId: 1, userName: 'CRM', at: clock.now() + later };
      expect(await server.app.get(LeadsRepository).changeStatus(won)).toBe(true);
      return render(...args);
    });
    expect((await setStatus(id, { from: 'new', to: 'in_progress', by: 'CRM' })).status).toBe(200);
    await server.outbox.tick();
    await server.outbox.whenIdle();
    expect(card().text).toContain('Статус: ✅ Заказ — CRM');
    expect(await sqlRow(server.db, 'select status, card_dirty_at from leads where id = ?', id)).toEqual({
      status: 'won',
      card_dirty_at: null,
    });
  });

  it('changes the status, answers the lead as GET /leads lists it, rewrites the card and names the CRM in the history', async () => {
    const { id, card } = await newLead();
    const res = await setStatus(id, { from: 'new', to: 'in_progress', by: 'CRM: Мария' });
    expect(res.status).toBe(200);
    const listed = await request(server.app.getHttpServer()).get('/leads').set(SECRET_HEADER, SECRET);
    expect(res.body).toEqual({ lead: listed.body.leads.find((l: { lead_number: number }) => l.lead_number === id) });
    expect(res.body.lead).toMatchObject({ lead_number: id, status: 'in_progress', status_changed_by: 'CRM: Мария' });
    await waitFor(() => /Статус: 🛠 В работе — CRM: Мария, /.test(card().text), 5000, 'the card shows the new status');
    expect(
      await sqlRows(server.db, 'select from_status, to_status, user_id, user_name from lead_status_changes where lead_id = ?', id),
    ).toEqual([{ from_status: 'new', to_status: 'in_progress', user_id: 0, user_name: 'CRM: Мария' }]);
  });

  it('409 with the status now on a stale `from`, and nothing changes', async () => {
    const { id } = await newLead();
    expect((await setStatus(id, { from: 'new', to: 'in_progress', by: 'CRM' })).status).toBe(200);
    const res = await setStatus(id, { from: 'new', to: 'spam', by: 'CRM' });
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ error: 'conflict', status: 'in_progress' });
    expect(await sqlRow(server.db, 'select status from leads where id = ?', id)).toEqual({ status: 'in_progress' });
  });

  it('422 invalid_body on a change the card does not offer and on a bad body; 404 for an unknown lead; 401 without the secret', async () => {
    const { id } = await newLead();
    const forbidden = await setStatus(id, { from: 'new', to: 'won', by: 'CRM' });
    expect(forbidden.status).toBe(422);
    expect(forbidden.body).toEqual({ error: 'invalid_body', errors: { to: 'cannot change from new to won; allowed: in_progress, spam' } });
    const bad = await setStatus(id, { from: 'old', to: 'in_progress', by: '   ' });
    expect(bad.status).toBe(422);
    expect(bad.body.error).toBe('invalid_body');
    expect(Object.keys(bad.body.errors).sort()).toEqual(['by', 'from']);
    expect((await setStatus(id + 100, { from: 'new', to: 'in_progress', by: 'CRM' })).status).toBe(404);
    expect((await setStatus('abc', { from: 'new', to: 'in_progress', by: 'CRM' })).status).toBe(404);
    // Only as the API writes a number: no leading zero, no zero.
    for (const n of [`00${id}`, '0']) expect((await setStatus(n, { from: 'new', to: 'in_progress', by: 'CRM' })).status).toBe(404);
    expect((await setStatus(id, { from: 'new', to: 'in_progress', by: 'CRM' }, 'wrong-secret-0123456789')).status).toBe(401);
    expect(await sqlRow(server.db, 'select count(*) as n from lead_status_changes')).toEqual({ n: 0 });
  });

  it('422 names what is wrong with `by`: no string (a number, a list, missing), empty or a control character, too long', async () => {
    const { id } = await newLead();
    const notString = 'must be a string: who changed the status (e.g. "CRM: Мария"), 1–128 characters';
    const notName = 'must be a name: not empty (after trimming spaces), no control characters';
    const cases: [unknown, string][] = [
      [5, notString],
      [['CRM'], notString],
      [undefined, notString],
      [null, notString],
      ['', notName],
      ['   ', notName],
      ['CRM\u0007', notName],
      ['x'.repeat(129), 'must be at most 128 characters'],
      ['🇷🇺'.repeat(129), 'must be at most 128 characters'],
    ];
    for (const [by, why] of cases) {
      const res = await setStatus(id, { from: 'new', to: 'in_progress', by });
      expect([by, res.status, res.body]).toEqual([by, 422, { error: 'invalid_body', errors: { by: why } }]);
    }
    expect(await sqlRow(server.db, 'select count(*) as n from lead_status_changes')).toEqual({ n: 0 });
    // 128 characters as a person counts them, an emoji being one — a flag (two code points) and a family (five) too —
    // spaces around trimmed.
    const longest = await setStatus(id, { from: 'new', to: 'in_progress', by: ` ${'😀'.repeat(128)} ` });
    expect([longest.status, longest.body.lead?.status_changed_by]).toEqual([200, '😀'.repeat(128)]);
    for (const [from, to, emoji] of [
      ['in_progress', 'won', '🇷🇺'],
      ['won', 'in_progress', '👨‍👩‍👧'],
    ] as const) {
      const res = await setStatus(id, { from, to, by: emoji.repeat(128) });
      expect([emoji, res.status, res.body.lead?.status_changed_by]).toEqual([emoji, 200, emoji.repeat(128)]);
    }
  });

  it('422 invalid_body, not a 500, for a body nested deeper than 32 levels; 32 levels of an unknown key are ignored', async () => {
    const { id } = await newLead();
    const nested = (depth: number) => JSON.parse(`${'['.repeat(depth)}${']'.repeat(depth)}`) as unknown;
    const deep = await setStatus(id, { from: 'new', to: 'in_progress', by: 'CRM', junk: nested(1320) });
    expect([deep.status, deep.body]).toEqual([422, { error: 'invalid_body' }]);
    expect(await sqlRow(server.db, 'select status from leads where id = ?', id)).toEqual({ status: 'new' });
    expect((await setStatus(id, { from: 'new', to: 'in_progress', by: 'CRM', junk: nested(31) })).status).toBe(200);
  });

  it('413 payload_too_large on a body over 16384 bytes, and the connection ends; nothing changes', async () => {
    const { id } = await newLead();
    const res = await setStatus(id, { from: 'new', to: 'in_progress', by: 'CRM', note: 'x'.repeat(16_400) });
    expect([res.status, res.body, res.headers.connection]).toEqual([413, { error: 'payload_too_large' }, 'close']);
    expect(await sqlRow(server.db, 'select status from leads where id = ?', id)).toEqual({ status: 'new' });
  });

  it('is not bound by LEADS_MANAGER_IDS, which names Telegram users', async () => {
    await server.close();
    server = await suite.boot({ clock: new FakeClock(), env: { LEADS_MANAGER_IDS: '501' } });
    const { id } = await newLead();
    expect((await setStatus(id, { from: 'new', to: 'spam', by: 'CRM' })).status).toBe(200);
  });

  it('a lead.status_changed webhook follows, by the name given and no Telegram user', async () => {
    const receiver = new WebhookReceiver();
    await receiver.start();
    try {
      await server.close();
      server = await suite.boot({
        clock: new FakeClock(),
        env: { LEADS_WEBHOOK_URL: receiver.url, LEADS_WEBHOOK_SECRET: 'whsec_test_0123456789abcdef' },
      });
      const { id } = await newLead();
      expect((await setStatus(id, { from: 'new', to: 'in_progress', by: 'CRM: Мария' })).status).toBe(200);
      await server.outbox.whenIdle();
      await server.outbox.tick();
      const changed = receiver.received.filter((r) => r.body.type === 'lead.status_changed');
      expect(changed.map((r) => [r.body.data.from, r.body.data.to, r.body.data.by, r.body.data.lead.status])).toEqual([
        ['new', 'in_progress', { telegram_user_id: null, name: 'CRM: Мария' }, 'in_progress'],
      ]);
    } finally {
      await receiver.stop();
    }
  });
});
