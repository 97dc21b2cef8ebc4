import { Inject, Injectable } from '@nestjs/common';
import { cutVisible } from '@stickers/shared';
import { formatTime, type Messages } from '../i18n';
import { MESSAGES } from '../i18n/i18n.module';
import { Clock } from '../clock/clock';
import { SERVER_CONFIG } from '../config/config.module';
import type { ServerConfig } from '../config/config';
import { LEAD_STATUSES } from '../domain/lead-status';
import { LeadsRepository } from '../repositories/leads.repository';
import { ReportsRepository, type SourceCount } from '../repositories/reports.repository';
import { DAY_MS } from '../clock/local-time';

/** Lines per section of /stickers_new before "…and N more". */
const LIST_CAP = 15;
/** Source groups listed in /stickers_stats and the digest before "…other sources". */
const SOURCE_CAP = 10;
/** A source value (≤ 64 characters) shown up to 40. */
const shown = (v: string) => cutVisible(v, 40);

/** `wedding · yandex / summer`: the landing, then UTM source / campaign, missing parts left out. */
function sourceLabel(c: Pick<SourceCount, 'landing' | 'source' | 'campaign'>): string {
  const utm = [c.source, c.campaign]
    .filter((v): v is string => !!v)
    .map(shown)
    .join(' / ');
  return [c.landing ? shown(c.landing) : '', utm].filter((v) => v !== '').join(' · ');
}

/** Leads per source and campaign, or per landing alone (`landingOnly`: LEADS_CARD_PII=0 hides the UTM values). */
function sourceLines(t: Messages, counts: SourceCount[], total: number, landingOnly = false): string[] {
  if (counts.length === 0) return [];
  const lines = [landingOnly ? t.reports.landingsTitle : t.reports.sourcesTitle];
  for (const c of counts.slice(0, SOURCE_CAP)) lines.push(`${sourceLabel(c)}: ${c.count}`);
  const rest = counts.slice(SOURCE_CAP).reduce((sum, c) => sum + c.count, 0);
  if (rest > 0) lines.push(t.reports.otherSources(rest));
  const without = total - counts.reduce((sum, c) => sum + c.count, 0);
  if (without > 0) lines.push(landingOnly ? t.reports.noLanding(without) : t.reports.noSource(without));
  return lines;
}

function ago(t: Messages, ms: number): string {
  const min = Math.max(0, Math.floor(ms / 60000));
  if (min < 60) return t.reports.minutes(min);
  const h = Math.floor(min / 60);
  if (h < 48) return t.reports.hours(h, min % 60);
  return t.reports.days(Math.floor(h / 24));
}

/** The texts of /stickers_new, /stickers_stats and the daily digest: numbers, lead numbers and sources, nothing personal. */
@Injectable()
export class ReportsService {
  constructor(
    @Inject(SERVER_CONFIG) private readonly config: ServerConfig,
    @Inject(MESSAGES) private readonly t: Messages,
    private readonly reports: ReportsRepository,
    private readonly leads: LeadsRepository,
    private readonly clock: Clock,
  ) {}

  private async sourcesSince(since: number, total: number): Promise<string[]> {
    const landingOnly = !this.config.leads.cardPii;
    return sourceLines(this.t, await this.reports.sourceCounts(since, { landingOnly }), total, landingOnly);
  }

  private async statusesSince(since: number): Promise<{ total: number; lines: string[] }> {
    const counts = await this.reports.statusCounts({ since });
    const total = LEAD_STATUSES.reduce((sum, s) => sum + counts[s], 0);
    return { total, lines: LEAD_STATUSES.map((s) => `${this.t.statuses[s]}: ${counts[s]}`) };
  }

  /** A section of /stickers_new: `none`, or its title, up to LIST_CAP lines and "…and N more". */
  private section(total: number, none: string, title: string, lines: string[]): string[] {
    if (total === 0) return [none];
    return [title, ...lines.slice(0, LIST_CAP), ...(total > LIST_CAP ? [this.t.reports.more(total - LIST_CAP)] : [])];
  }

  private time(ms: number): string {
    return formatTime(ms, this.config.timezone, this.t.intl);
  }

  /** docs/requirements.md §6.2: leads without a card (last error, next attempt) and leads still new, oldest first. */
  async newLeads(): Promise<string> {
    const now = this.clock.now();
    const unpublished = await this.leads.listUnpublished(LIST_CAP + 1);
    const unpublishedTotal = await this.leads.countUnpublished();
    const stillNew = await this.reports.stillNew(LIST_CAP + 1);
    const stillNewTotal = await this.reports.countStillNew();
    const r = this.t.reports;
    const unpublishedLines = unpublished.map((l) => {
      const error = l.last_error ? r.lastError(l.last_error.slice(0, 120)) : r.notSentYet;
      return r.unpublishedLine(l.id, this.time(l.created_at), l.publish_attempts, error, this.time(Math.max(l.next_attempt_at, now)));
    });
    const stillNewLines = stillNew.map(
      (l) =>
        `${r.stillNewLine(l.id, this.time(l.created_at), ago(this.t, now - l.created_at))}${l.published_at === null ? r.withoutCard : ''}`,
    );
    return [
      ...this.section(unpublishedTotal, r.allPublished, r.unpublished(unpublishedTotal), unpublishedLines),
      '',
      ...this.section(stillNewTotal, r.noneNew, r.stillNew(stillNewTotal), stillNewLines),
    ].join('\n');
  }

  async stats(): Promise<string> {
    const now = this.clock.now();
    const r = this.t.reports;
    const lines = [r.statsTitle];
    for (const days of [7, 30]) {
      const { total, lines: statuses } = await this.statusesSince(now - days * DAY_MS);
      lines.push('', r.statsPeriod(days, total), ...statuses);
      lines.push(r.repeats(await this.reports.repeatsSince(now - days * DAY_MS)));
      lines.push(...(await this.sourcesSince(now - days * DAY_MS, total)));
    }
    lines.push('', r.unpublishedNow(await this.leads.countUnpublished()));
    return lines.join('\n');
  }

  async digest(): Promise<string> {
    const now = this.clock.now();
    const { total, lines } = await this.statusesSince(now - DAY_MS);
    const r = this.t.reports;
    return [
      r.digestTitle(total),
      ...lines,
      r.repeats(await this.reports.repeatsSince(now - DAY_MS)),
      r.unpublishedNow(await this.leads.countUnpublished()),
      r.digestStillNew(await this.reports.countStillNew()),
      ...(await this.sourcesSince(now - DAY_MS, total)),
    ].join('\n');
  }
}
