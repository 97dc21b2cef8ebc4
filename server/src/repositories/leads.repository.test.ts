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
});
