import { Injectable } from '@nestjs/common';
import { type ExpressionBuilder, sql } from 'kysely';
import { InjectDb } from '../database/database.module';
import type { LeadsDb } from '../database/database';
import { dialectOf } from '../database/dialect-sql';
import type { Database } from '../database/schema';
import type { LeadStatus } from '../domain/lead-status';
import { inLeadScope, type LeadScope } from './lead-pages.repository';
import { countsByStatus } from './reports.repository';

/** The leads a chart counts: created in [since, until), of one landing's source (null: none) or of any (undefined). */
export interface ChartWindow {
  since: number;
  until: number;
  source?: string | null;
  /** The inbox viewer's leads; undefined: every lead (the digest). */
  scope?: LeadScope;
}

/** Quarter hours: every time zone's offset is a whole number of them, so any local day is a run of whole quarters. */
export const QUARTER_MS = 15 * 60 * 1000;

/** Leads created in a quarter hour (`quarter` × QUARTER_MS is its start) from one source. */
export interface QuarterCount {
  quarter: number;
  source: string | null;
  n: number;
}

type LeadsRef = ExpressionBuilder<Database & { l: Database['leads'] }, 'l'>;

/**
 * The inbox's charts (and the digest's picture): counts over a window of `leads.created_at` (index leads_created_at),
 * with the first status change of each lead from `lead_status_changes` (index lead_status_changes_lead). Each query
 * reads only the window's rows and answers with aggregates, never the rows themselves.
 */
@Injectable()
export class ChartsRepository {
  constructor(@InjectDb() private readonly db: LeadsDb) {}

  private inWindow(w: ChartWindow) {
    return (eb: LeadsRef) =>
      eb.and([
        eb('l.created_at', '>=', w.since),
        eb('l.created_at', '<', w.until),
        ...(w.source === undefined ? [] : [eb('l.source_landing', w.source === null ? 'is' : '=', w.source)]),
        ...(w.scope === undefined ? [] : [inLeadScope(this.db, w.scope)(eb)]),
      ]);
  }

  /** Leads per quarter hour (integer division on both databases) and source: the caller groups them into local days. */
  async perQuarterHour(w: ChartWindow): Promise<QuarterCount[]> {
    const quarter = sql<number>`${sql.ref('l.created_at')} / ${sql.lit(QUARTER_MS)}`;
    const rows = await this.db
      .selectFrom('leads as l')
      .select([quarter.as('quarter'), 'l.source_landing', (eb) => eb.fn.countAll<number>().as('n')])
      .where(this.inWindow(w))
      .groupBy([quarter, 'l.source_landing'])
      .execute();
    return rows.map((r) => ({ quarter: Number(r.quarter), source: r.source_landing, n: Number(r.n) }));
  }

  /** The window's leads by the status they have now. */
  async statusCounts(w: ChartWindow): Promise<Record<LeadStatus, number>> {
    const rows = await this.db
      .selectFrom('leads as l')
      .select(['l.status', (eb) => eb.fn.countAll<number>().as('n')])
      .where(this.inWindow(w))
      .groupBy('l.status')
      .execute();
    return countsByStatus(rows);
  }

  /**
   * The median time (ms) from a lead's creation to its first status change, over the window's changed leads (null:
   * none): PostgreSQL's `percentile_cont`; on SQLite a count, then the middle one or two rows in order.
   */
  async medianFirstChangeMs(w: ChartWindow): Promise<number | null> {
    const changed = this.db
      .selectFrom('leads as l')
      .innerJoin('lead_status_changes as c', 'c.lead_id', 'l.id')
      .where(this.inWindow(w))
      .groupBy(['l.id', 'l.created_at']);
    if (dialectOf(this.db) === 'postgres') {
      const { median } = await this.db
        .selectFrom(changed.select(sql<number>`min(${sql.ref('c.at')}) - ${sql.ref('l.created_at')}`.as('wait')).as('waits'))
        .select(sql<number | null>`percentile_cont(0.5) within group (order by ${sql.ref('waits.wait')})`.as('median'))
        .executeTakeFirstOrThrow();
      return median === null ? null : Number(median);
    }
    const { n } = await this.db
      .selectFrom(changed.select('l.id').as('changed'))
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    const count = Number(n);
    if (count === 0) return null;
    const middle = await changed
      .select(sql<number>`min(${sql.ref('c.at')}) - ${sql.ref('l.created_at')}`.as('wait'))
      .orderBy('wait')
      .limit(count % 2 === 0 ? 2 : 1)
      .offset(Math.floor((count - 1) / 2))
      .execute();
    return middle.reduce((sum, r) => sum + Number(r.wait), 0) / middle.length;
  }
}
