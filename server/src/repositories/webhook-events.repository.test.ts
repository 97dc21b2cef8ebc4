import type { CompiledQuery } from 'kysely';
import { migrateToLatest, openDatabase } from '../database/database';
import { WebhookEventsRepository } from './webhook-events.repository';

describe('WebhookEventsRepository', () => {
  it('reads the history rows of one kind not announced yet through the (kind, id) index, not by scanning the history', async () => {
    const { db, sqlite } = openDatabase(':memory:');
    await migrateToLatest(db);
    const compiled: CompiledQuery[] = [];
    const watched = db.withPlugin({
      transformQuery: (args) => (compiled.push(db.getExecutor().compileQuery(args.node, args.queryId)), args.node),
      transformResult: (args) => Promise.resolve(args.result),
    });
    const repo = new WebhookEventsRepository(watched);
    await repo.newBindings(0, 100);
    await repo.newAnonymisations(0, 100);
    for (const { sql, parameters } of compiled) {
      const plan = (sqlite.prepare(`explain query plan ${sql}`).all(...parameters) as { detail: string }[]).map((r) => r.detail);
      expect(plan.find((d) => /^(SCAN|SEARCH) v\b/.test(d))).toMatch(/USING (COVERING )?INDEX lead_events_kind/);
    }
    expect(compiled).toHaveLength(2);
    await db.destroy();
  });
});
