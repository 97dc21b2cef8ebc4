import { plannedDatabase } from '../../test/support/query-plans';
import { LeadPagesRepository } from './lead-pages.repository';
import { OutboxRepository, TELEGRAM_TARGET } from './outbox.repository';

describe('the outbox table', () => {
  it('costs a Telegram row two index entries, and finds its rows by index: the claim, a lead’s rows, the waiting edit, the cascades', async () => {
    const { db, sqlite, watched, compiled, plan } = await plannedDatabase();
    const indexes = sqlite.prepare(`select name, sql from sqlite_master where type = 'index' and tbl_name = 'outbox'`).all() as {
      name: string;
      sql: string;
    }[];
    // Each index with the rows it holds: a Telegram row waiting (no event, not done) is in those without a condition
    // or with `done_at is null`.
    const holding = Object.fromEntries(indexes.map((i) => [i.name, / where (.+)$/i.exec(i.sql)?.[1] ?? 'every row']));
    expect(holding).toEqual({
      outbox_not_done: '"done_at" is null',
      outbox_waiting: 'every row',
      outbox_event: '"event_id" is not null',
    });

    const claim = { now: 0, wallNow: 0, until: 1, holder: 'h', target: TELEGRAM_TARGET, limit: 10, kind: 'card' as const };
    await new OutboxRepository(watched).claim(claim);
    // A button press claims its lead's waiting edit at once.
    await new OutboxRepository(watched).claim({ ...claim, kind: 'card_edit', leadId: 1, anyTime: true });
    await new LeadPagesRepository(watched).outbox(1);
    const plans = [
      ...compiled.map(({ sql, parameters }) => plan(sql, parameters)),
      // The edit trigger's "one waiting already" (a lead of a long conversation has thousands of done rows).
      plan(`select 1 from outbox where lead_id = 1 and kind = 'card_edit' and done_at is null and claimed_by is null`),
      // What deleting a lead or a webhook event cascades to.
      plan('delete from outbox where lead_id = 1'),
      plan('delete from outbox where event_id = 1'),
    ];
    expect(plans).toHaveLength(6);
    for (const steps of plans) {
      expect(steps.filter((d) => /\boutbox\b|^(SCAN|SEARCH) [op]\b/.test(d))).not.toHaveLength(0);
      expect(steps.filter((d) => /^SCAN (outbox|o|p)\b/.test(d))).toEqual([]);
    }
    // The rows before one in its lead's queue, and the edit waiting, are read among the rows not done only.
    const [dueClaim, pressClaim, , waitingEdit] = plans;
    for (const steps of [dueClaim, pressClaim])
      expect(steps).toContainEqual(expect.stringMatching(/^SEARCH p .*\(lead_id=\? AND done_at=\? AND target=\? AND id<\?\)/));
    expect(waitingEdit).toEqual([expect.stringMatching(/^SEARCH outbox USING INDEX outbox_waiting \(lead_id=\? AND done_at=\?\)/)]);
    await db.destroy();
  });
});
