import { plannedDatabase } from '../../test/support/query-plans';
import { LeadsRepository } from './leads.repository';

describe('LeadsRepository', () => {
  it('finds the lead a message of the group is the card of by index, not by reading every lead', async () => {
    const { db, watched, compiled, plan } = await plannedDatabase();
    // A member's reply in the group asks whose card (or notice) the message it answers is.
    expect(await new LeadsRepository(watched).leadAt('-1001000000001', 42)).toBeUndefined();
    const [card] = compiled;
    expect(plan(card.sql, card.parameters)).toEqual([
      expect.stringMatching(/^SEARCH leads USING COVERING INDEX leads_card \(chat_id=\? AND message_id=\?\)/),
    ]);
    await db.destroy();
  });

  it("takes the newest card's time from the index of published leads, in which a lead without a card has no entry", async () => {
    const { db, sqlite, watched, compiled, plan, entries } = await plannedDatabase();
    const leads = new LeadsRepository(watched);
    sqlite.prepare(`insert into leads (request_id, created_at) values ('a', 1), ('b', 2)`).run();
    expect(await leads.lastPublishedAt()).toBeNull();
    expect(entries('leads_published_at')).toBe(0);
    sqlite.prepare(`update leads set published_at = 5, chat_id = '-1', message_id = 7 where request_id = 'a'`).run();
    expect(await leads.lastPublishedAt()).toBe(5);
    expect(entries('leads_published_at')).toBe(1);
    for (const { sql, parameters } of compiled) {
      expect(plan(sql, parameters)).toEqual([expect.stringMatching(/^SEARCH leads USING COVERING INDEX leads_published_at /)]);
    }
    await db.destroy();
  });

  it('a new lead written with its updated_at is not rewritten by the insert trigger; one written without gets it from the trigger', async () => {
    const { db, sqlite } = await plannedDatabase();
    // Rows changed by a statement and its triggers: the lead, its card's outbox row, and the trigger's rewrite if any.
    const changes = (write: () => void) => {
      const before = (sqlite.prepare('select total_changes() as n').get() as { n: number }).n;
      write();
      return (sqlite.prepare('select total_changes() as n').get() as { n: number }).n - before;
    };
    const insert = sqlite.prepare('insert into leads (request_id, created_at, received_at, updated_at) values (?, ?, ?, ?)');
    expect(changes(() => insert.run('with', 5, 7, 7))).toBe(2);
    expect(changes(() => sqlite.prepare(`insert into leads (request_id, created_at, received_at) values ('without', 5, 7)`).run())).toBe(3);
    expect(sqlite.prepare('select request_id, updated_at from leads order by id').all()).toEqual([
      { request_id: 'with', updated_at: 7 },
      { request_id: 'without', updated_at: 7 },
    ]);
    await db.destroy();
  });

  it('reads the cards a reminder may be due for from their own index, in which a new lead, an answered or a reminded one has no entry', async () => {
    const { db, sqlite, watched, compiled, plan, entries } = await plannedDatabase();
    const leads = new LeadsRepository(watched);
    const add = sqlite.prepare(
      'insert into leads (request_id, status, created_at, published_at, chat_id, message_id, reminded_at) values (?, ?, ?, ?, ?, ?, ?)',
    );
    add.run('without card', 'new', 1, null, null, null, null);
    add.run('due', 'new', 2, 3, '-1', 10, null);
    add.run('answered', 'in_progress', 3, 4, '-1', 11, null);
    add.run('reminded', 'new', 4, 5, '-1', 12, 6);
    expect(entries('leads_reminder_due')).toBe(1);
    expect((await leads.dueReminders(100, 20)).map((l) => l.message_id)).toEqual([10]);
    const [due] = compiled;
    expect(plan(due.sql, due.parameters)).toEqual([expect.stringMatching(/^SEARCH leads USING INDEX leads_reminder_due \(status=\?\)$/)]);
    // Its reminder taken: out of the index.
    expect(await leads.claimReminder(2, 7)).toBe(true);
    expect(entries('leads_reminder_due')).toBe(0);
    await db.destroy();
  });
});
