import { plannedDatabase } from '../../test/support/query-plans';
import { WebhookEventsRepository } from './webhook-events.repository';

describe('WebhookEventsRepository', () => {
  it("reads the history rows of one kind not announced yet through that kind's index, in which other kinds have no entry", async () => {
    const { db, sqlite, watched, compiled, plan, entries } = await plannedDatabase();
    const repo = new WebhookEventsRepository(watched);
    await repo.newBindings(0, 100);
    await repo.newAnonymisations(0, 100);
    const [bindings, anonymisations] = compiled.map(({ sql, parameters }) =>
      plan(sql, parameters).find((d) => /^(SCAN|SEARCH) v\b/.test(d)),
    );
    expect(bindings).toMatch(/^SEARCH v USING (COVERING )?INDEX lead_events_bound \(id>\?\)/);
    expect(anonymisations).toMatch(/^SEARCH v USING (COVERING )?INDEX lead_events_anonymised \(id>\?\)/);
    expect(compiled).toHaveLength(2);
    // A card's `published` row (every lead gets one) is in neither.
    sqlite.prepare(`insert into leads (request_id, created_at) values ('a', 1)`).run();
    sqlite.prepare(`insert into lead_events (lead_id, kind, at) values (1, 'published', 1), (1, 'anonymised', 2)`).run();
    expect([entries('lead_events_anonymised'), entries('lead_events_bound')]).toEqual([1, 0]);
    await db.destroy();
  });

  it('pages the events newest first from the (at, id) index, not by sorting every event for each page', async () => {
    const { db, sqlite, watched, compiled, plan } = await plannedDatabase();
    // The cursor's event (its lead does not matter here).
    sqlite.pragma('foreign_keys = OFF');
    sqlite
      .prepare(`insert into webhook_events (public_id, lead_id, type, source_id, at, data) values ('e1', 1, 'lead.created', 1, 5, '{}')`)
      .run();
    const repo = new WebhookEventsRepository(watched);
    await repo.recentEvents(null, null, 50);
    await repo.recentEvents(null, 'e1', 50);
    await repo.recentEvents(0, 'e1', 50);
    const pages = compiled.filter((q) => /order by "at" desc/.test(q.sql)).map(({ sql, parameters }) => plan(sql, parameters));
    // The first page reads the index from its newest end; a page after a cursor searches it from the cursor down.
    expect(pages).toEqual([
      [expect.stringMatching(/^SCAN webhook_events USING INDEX webhook_events_at$/)],
      [expect.stringMatching(/^SEARCH webhook_events USING INDEX webhook_events_at \(/)],
      [expect.stringMatching(/^SEARCH webhook_events USING INDEX webhook_events_at \(/)],
    ]);
    // The deliveries of a page's events, by the outbox's index of webhook rows.
    const deliveries = compiled.filter((q) => /from "outbox"/.test(q.sql)).map(({ sql, parameters }) => plan(sql, parameters));
    expect(deliveries).not.toHaveLength(0);
    for (const steps of deliveries)
      expect(steps).toContainEqual(expect.stringMatching(/^SEARCH outbox USING INDEX outbox_event \(event_id=\?\)/));
    await db.destroy();
  });
});
