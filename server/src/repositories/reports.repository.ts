import { Injectable } from '@nestjs/common';
import { sql } from 'kysely';
import { InjectDb } from '../database/database.module';
import type { LeadsDb } from '../database/database';
import { dialectOf } from '../database/dialect-sql';
import { LEAD_STATUSES, type LeadStatus } from '../domain/lead-status';
import { inLeadScope, type LeadScope, type ScopedLeads } from './lead-pages.repository';
import { countRows } from './transactor';

/** The leads counted: created in [since, until), of one landing's source (null: none) or of any (undefined). */
export interface ChartWindow {
  since: number;
  /** Undefined: up to now. */
  until?: number;
  source?: string | null;
  /** The inbox viewer's leads; undefined: every lead (the digest). */
  scope?: LeadScope;
}

/** Quarter hours: every time zone's offset is a whole number of them, so any local day is a run of whole quarters. */
export const QUARTER_MS = 15 * 60 * 1000;

export interface SourceCount {
  landing: string | null;
  source: string | null;
  campaign: string | null;
  count: number;
}

/** Read-only counts for the bot's commands, the daily digest and the inbox's charts. */
@Injectable()
export class ReportsRepository {
  constructor(@InjectDb() private readonly db: LeadsDb) {}

  /** Leads still `new` (published or not, not anonymised), oldest first. */
  stillNew(limit: number) {
    return this.stillNewLeads().select(['id', 'created_at', 'published_at']).orderBy('created_at').orderBy('id').limit(limit).execute();
  }

  countStillNew(): Promise<number> {
    return countRows(this.stillNewLeads());
  }

  private stillNewLeads() {
    return this.db.selectFrom('leads').where('status', '=', 'new').where('anonymised_at', 'is', null);
  }

  repeatsSince(since: number): Promise<number> {
    return countRows(this.db.selectFrom('lead_repeats').where('created_at', '>=', since));
  }

  /**
   * Leads created since `since` per landing, UTM source and campaign, most first; leads with none of the three are not
   * listed. `landingOnly`: per landing alone, the UTM values (personal) neither read nor returned.
   */
  async sourceCounts(since: number, options: { landingOnly?: boolean } = {}): Promise<SourceCount[]> {
    const columns: ('source_landing' | 'utm_source' | 'utm_campaign')[] = options.landingOnly
      ? ['source_landing']
      : ['source_landing', 'utm_source', 'utm_campaign'];
    const rows = await this.db
      .selectFrom('leads')
      .select([...columns, (eb) => eb.fn.countAll<number>().as('n')])
      .where('created_at', '>=', since)
      .where((eb) => eb.or(columns.map((c) => eb(c, 'is not', null))))
      .groupBy(columns)
      .execute();
    // Without the UTM columns read, their values are undefined: null.
    return rows
      .map((r) => ({ landing: r.source_landing, source: r.utm_source ?? null, campaign: r.utm_campaign ?? null, count: Number(r.n) }))
      .sort((a, b) => b.count - a.count || sortKey(a).localeCompare(sortKey(b)));
  }

  private inWindow(w: ChartWindow) {
    return (eb: ScopedLeads) =>
      eb.and([
        eb('l.created_at', '>=', w.since),
        ...(w.until === undefined ? [] : [eb('l.created_at', '<', w.until)]),
        ...(w.source === undefined ? [] : [eb('l.source_landing', w.source === null ? 'is' : '=', w.source)]),
        ...(w.scope === undefined ? [] : [inLeadScope(this.db, w.scope)(eb)]),
      ]);
  }

  /** Leads per quarter hour (integer division on both databases) and source: the caller groups them into local days. */
  async perQuarterHour(w: ChartWindow) {
    const quarter = sql<number>`${sql.ref('l.created_at')} / ${sql.lit(QUARTER_MS)}`;
    const rows = await this.db
      .selectFrom('leads as l')
      .select([quarter.as('quarter'), 'l.source_landing', (eb) => eb.fn.countAll<number>().as('n')])
      .where(this.inWindow(w))
      .groupBy([quarter, 'l.source_landing'])
      .execute();
    return rows.map((r) => ({ quarter: Number(r.quarter), source: r.source_landing, n: Number(r.n) }));
  }

  /** The window's leads by the status they have now, every status present. */
  async statusCounts(w: ChartWindow): Promise<Record<LeadStatus, number>> {
    const rows = await this.db
      .selectFrom('leads as l')
      .select(['l.status', (eb) => eb.fn.countAll<number>().as('n')])
      .where(this.inWindow(w))
      .groupBy('l.status')
      .execute();
    const counts = Object.fromEntries(LEAD_STATUSES.map((s) => [s, 0])) as Record<LeadStatus, number>;
    for (const r of rows) counts[r.status] = Number(r.n);
    return counts;
  }

  /** The median time (ms) from a lead's creation to its first status change, over the window's changed leads (null: none). */
  async medianFirstChangeMs(w: ChartWindow): Promise<number | null> {
    const changed = this.db
      .selectFrom('leads as l')
      .innerJoin('lead_status_changes as c', 'c.lead_id', 'l.id')
      .where(this.inWindow(w))
      .groupBy(['l.id', 'l.created_at', 'l.received_at']);
    // From when the team could see it: a late lead's arrival, not the visitor's time on the landing.
    const wait = sql<number>`min(${sql.ref('c.at')}) - coalesce(${sql.ref('l.received_at')}, ${sql.ref('l.created_at')})`.as('wait');
    if (dialectOf(this.db) === 'postgres') {
      const { median } = await this.db
        .selectFrom(changed.select(wait).as('waits'))
        .select(sql<number | null>`percentile_cont(0.5) within group (order by ${sql.ref('waits.wait')})`.as('median'))
        .executeTakeFirstOrThrow();
      return median === null ? null : Number(median);
    }
    // SQLite has no percentile: a count, then the middle row(s).
    const count = await countRows(this.db.selectFrom(changed.select('l.id').as('changed')));
    if (count === 0) return null;
    const middle = await changed
      .select(wait)
      .orderBy('wait')
      .limit(count % 2 === 0 ? 2 : 1)
      .offset(Math.floor((count - 1) / 2))
      .execute();
    return middle.reduce((sum, r) => sum + Number(r.wait), 0) / middle.length;
  }
}

const sortKey = (c: SourceCount) => [c.landing, c.source, c.campaign].map((v) => v ?? '').join('\u0000');
