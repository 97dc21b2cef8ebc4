import { Injectable } from '@nestjs/common';
import { InjectDb } from '../database/database.module';
import type { LeadsDb } from '../database/database';
import { LEAD_STATUSES, type LeadStatus } from '../domain/lead-status';

/** Read-only queries for the bot's commands and the daily digest. */
@Injectable()
export class ReportsRepository {
  constructor(@InjectDb() private readonly db: LeadsDb) {}

  /** Leads still `new` (published or not, not anonymised), oldest first. */
  stillNew(limit: number) {
    return this.stillNewLeads().select(['id', 'created_at', 'published_at']).orderBy('created_at').orderBy('id').limit(limit).execute();
  }

  async countStillNew(): Promise<number> {
    const row = await this.stillNewLeads()
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  private stillNewLeads() {
    return this.db.selectFrom('leads').where('status', '=', 'new').where('anonymised_at', 'is', null);
  }

  async statusCounts(since: number): Promise<Record<LeadStatus, number>> {
    const rows = await this.db
      .selectFrom('leads')
      .select(['status', (eb) => eb.fn.countAll<number>().as('n')])
      .where('created_at', '>=', since)
      .groupBy('status')
      .execute();
    return countsByStatus(rows);
  }

  async repeatsSince(since: number): Promise<number> {
    const row = await this.db
      .selectFrom('lead_repeats')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('created_at', '>=', since)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /**
   * Leads created since `since`, counted per landing, UTM source and UTM campaign, most first; leads with none of the
   * three are not listed (the caller counts them as the rest). `landingOnly`: per landing alone, the UTM values
   * (personal: domain/personal-fields.ts) neither read nor returned, and leads without a landing not listed.
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
}

/** A count per status of grouped rows, every status present. */
export function countsByStatus(rows: { status: LeadStatus; n: number | string }[]): Record<LeadStatus, number> {
  const counts = Object.fromEntries(LEAD_STATUSES.map((s) => [s, 0])) as Record<LeadStatus, number>;
  for (const r of rows) counts[r.status] = Number(r.n);
  return counts;
}

/** One group of `sourceCounts`: null where the leads had no value. */
export interface SourceCount {
  landing: string | null;
  source: string | null;
  campaign: string | null;
  count: number;
}

const sortKey = (c: SourceCount) => [c.landing, c.source, c.campaign].map((v) => v ?? '').join('\u0000');
