import { plannedDatabase } from '../../test/support/query-plans';
import { WebhookEventsRepository } from './webhook-events.repository';

describe('WebhookEventsRepository', () => {
  it('reads the history rows of one kind not announced yet through the (kind, id) index, not by scanning the history', async () => {
    const { db, watched, compiled, plan } = await plannedDatabase();
    const repo = new WebhookEventsRepository(watched);
    await repo.newBindings(0, 100);
    await repo.newAnonymisations(0, 100);
    for (const { sql, parameters } of compiled) {
      expect(plan(sql, parameters).find((d) => /^(SCAN|SEARCH) v\b/.test(d))).toMatch(/USING (COVERING )?INDEX lead_events_kind/);
    }
    expect(compiled).toHaveLength(2);
    await db.destroy();
  });
});
