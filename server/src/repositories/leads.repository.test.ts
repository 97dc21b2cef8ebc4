import type { CompiledQuery } from 'kysely';
import { migrateToLatest, openDatabase } from '../database/database';
import { LeadsRepository } from './leads.repository';

describe('LeadsRepository', () => {
  it('finds the lead a message of the group is the card of by index, not by reading every lead', async () => {
    const { db, sqlite } = openDatabase(':memory:');
    await migrateToLatest(db);
    const compiled: CompiledQuery[] = [];
    const watched = db.withPlugin({
      transformQuery: (args) => (compiled.push(db.getExecutor().compileQuery(args.node, args.queryId)), args.node),
      transformResult: (args) => Promise.resolve(args.result),
    });
    // A member's reply in the group asks whose card (or notice) the message it answers is.
    expect(await new LeadsRepository(watched).leadAt('-1001000000001', 42)).toBeUndefined();
    const [card] = compiled;
    const plan = (sqlite.prepare(`explain query plan ${card.sql}`).all(...card.parameters) as { detail: string }[]).map((r) => r.detail);
    expect(plan).toEqual([expect.stringMatching(/^SEARCH leads USING COVERING INDEX leads_card \(chat_id=\? AND message_id=\?\)/)]);
    await db.destroy();
  });
});
