import { Inject, Injectable } from '@nestjs/common';
import { Clock } from '../clock/clock';
import { SERVER_CONFIG } from '../config/config.module';
import type { ServerConfig } from '../config/config';
import { sourceFilter } from '../export/export-query';
import { type ChartWindow, QUARTER_MS, ReportsRepository } from '../repositories/reports.repository';
import type { LeadScope } from '../repositories/lead-pages.repository';
import { svgToPng } from './chart-png';
import { funnelSvg, LIGHT_PALETTE, PAGE_CHART_WIDTH, perDaySvg, type PerDayChart } from './chart-svg';
import { MESSAGES } from '../i18n/i18n.module';
import type { Messages } from '../i18n';
import { lastLocalDays } from './local-days';

const CHART_DAYS = 30;
/** The digest's picture: twice the chart's size, for a phone's screen. */
const DIGEST_PICTURE_SCALE = 2;

/** The charts of the last CHART_DAYS local days: numbers and SVG for the inbox, the per-day chart as the digest's PNG. */
@Injectable()
export class ChartsService {
  constructor(
    @Inject(SERVER_CONFIG) private readonly config: ServerConfig,
    private readonly charts: ReportsRepository,
    private readonly clock: Clock,
    @Inject(MESSAGES) private readonly t: Messages,
  ) {}

  private window(source?: string | null, scope?: LeadScope | null) {
    const days = lastLocalDays(this.clock.now(), this.config.timezone, CHART_DAYS);
    const window: ChartWindow = { since: days.starts[0], until: days.starts[CHART_DAYS], source, ...(scope ? { scope } : {}) };
    return { days, window };
  }

  /** Leads per local day and source, more leads first, none last: quarter hours grouped here into the zone's days (DST too). */
  async perDay(source?: string | null, scope?: LeadScope | null): Promise<PerDayChart> {
    const { days, window } = this.window(source, scope);
    const bySource = new Map<string | null, number[]>();
    for (const row of await this.charts.perQuarterHour(window)) {
      const at = row.quarter * QUARTER_MS;
      const d = days.starts.findIndex((start, i) => start <= at && at < days.starts[i + 1]);
      if (d < 0) continue;
      let counts = bySource.get(row.source);
      if (!counts) bySource.set(row.source, (counts = new Array<number>(CHART_DAYS).fill(0)));
      counts[d] += row.n;
    }
    const total = (c: number[]) => c.reduce((a, b) => a + b, 0);
    const series = [...bySource.entries()]
      .map(([s, counts]) => ({ source: s, counts }))
      .sort(
        (a, b) =>
          Number(a.source === null) - Number(b.source === null) ||
          total(b.counts) - total(a.counts) ||
          (a.source ?? '').localeCompare(b.source ?? ''),
      );
    return { days: days.dates, series, ...(source !== undefined ? { source } : {}) };
  }

  /** The inbox's charts of the leads a viewer sees (`scope`; null: all), of `source` (checked by InboxChartsQuery). */
  async inbox(rawSource: string | undefined, scope: LeadScope | null = null) {
    const source = rawSource === undefined ? undefined : sourceFilter(rawSource);
    const { window } = this.window(source, scope);
    // At once: on PostgreSQL each on its own pooled connection.
    const [perDay, funnel, median] = await Promise.all([
      this.perDay(source, scope),
      this.charts.statusCounts(window),
      this.charts.medianFirstChangeMs(window),
    ]);
    return {
      days: perDay.days,
      per_day: perDay.series,
      funnel,
      median_first_change_s: median === null ? null : Math.round(median / 1000),
      svg: {
        per_day: perDaySvg(perDay, { t: this.t, width: PAGE_CHART_WIDTH }),
        funnel: funnelSvg(funnel, CHART_DAYS, { t: this.t, width: PAGE_CHART_WIDTH }),
      },
    };
  }

  /** The per-day chart of every source as a PNG in the page's light colours, with its legend: the digest's picture. */
  async digestPicture(): Promise<{ png: Buffer; width: number; height: number; caption: string }> {
    const svg = perDaySvg(await this.perDay(), { t: this.t, palette: LIGHT_PALETTE, legend: true });
    return { ...svgToPng(svg, { scale: DIGEST_PICTURE_SCALE }), caption: this.t.charts.digestCaption(CHART_DAYS) };
  }
}
