import { LEAD_STATUSES, type LeadStatus } from '../domain/lead-status';
import { dateFormat } from '../clock/local-time';
import type { Messages } from '../i18n';

/** The charts as SVG. Without a palette a page themes them (`currentColor`, bar classes `s0`…`s5`); with one (the PNG) every colour is explicit. */

/** The inbox's light theme (its --s0…--s5), for the digest's picture. */
export const LIGHT_PALETTE = {
  background: '#ffffff',
  text: '#1f2937',
  grid: '#d1d5db',
  series: ['#3b82f6', '#f59e0b', '#10b981', '#ef4444', '#a855f7', '#94a3b8'],
  fontFamily: 'DejaVu Sans, Liberation Sans, Noto Sans, Arial, sans-serif',
};
type ChartPalette = typeof LIGHT_PALETTE;

/** Bar classes s0…s5, one colour each: past them the smallest sources are folded into one (foldSeries). */
const SERIES_CLASSES = 6;

/** The days (`YYYY-MM-DD`, oldest first), a series per source in the order of their classes, the source it is limited to. */
export interface PerDayChart {
  days: string[];
  /** `label`: what the legend names a series by instead of its source (the folded "others" of a picture). */
  series: { source: string | null; counts: number[]; label?: string }[];
  source?: string | null;
}

/** The digest's picture is drawn 720 units wide; the page's charts 360, about a phone's width, so its text stays 12 px. */
const WIDTH = 720;
export const PAGE_CHART_WIDTH = 360;
const PER_DAY_HEIGHT = 300;
const LEGEND_HEIGHT = 44;
const LEGEND_ROW = 20;
const FONT_SIZE = 12;

/** The per-day chart's size in SVG units (pixels at scale 1): a legend of more than two rows makes it taller. */
export function perDaySize(legend: boolean, legendRows = 2, width = WIDTH): { width: number; height: number } {
  return { width, height: PER_DAY_HEIGHT + (legend ? Math.max(LEGEND_HEIGHT, legendRows * LEGEND_ROW + 4) : 0) };
}

/** What XML 1.0 does not allow or discourages (C1 controls, noncharacters): resvg refuses a picture with one. */
const NOT_XML = /[^\t\n\r\u0020-\u007E\u00A0-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]|\p{Noncharacter_Code_Point}/gu;
const XML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' };

/** Escaped as XML text or attribute, the characters XML refuses dropped. */
export const escapeXml = (s: string): string => s.replace(NOT_XML, '').replace(/[&<>"']/g, (c) => XML_ESCAPES[c]);

const DAY_MONTH: Intl.DateTimeFormatOptions = { day: '2-digit', month: '2-digit' };
/** A `YYYY-MM-DD` day as the locale writes a day and month: `01.12` (ru), `12/01` (en). */
const shortDate = (t: Messages, day: string) => dateFormat(DAY_MONTH, t.intl, 'UTC').format(new Date(`${day}T00:00:00Z`));

const sum = (counts: number[]) => counts.reduce((a, b) => a + b, 0);
/** Each day's count over `series`. */
const perDayTotals = (days: number, series: PerDayChart['series']) =>
  Array.from({ length: days }, (_, d) => sum(series.map((s) => s.counts[d] ?? 0)));

const sourceName = (t: Messages, source: string | null) => source ?? t.charts.noSource;
const seriesName = (t: Messages, s: PerDayChart['series'][number]) => s.label ?? sourceName(t, s.source);

/**
 * The series, one colour each: past SERIES_CLASSES sources the smallest are added up into one "others" series, so no
 * two bars share a colour and a legend names every one.
 */
function foldSeries(t: Messages, series: PerDayChart['series']): PerDayChart['series'] {
  if (series.length <= SERIES_CLASSES) return series;
  const kept = series.slice(0, SERIES_CLASSES - 1);
  const rest = series.slice(SERIES_CLASSES - 1);
  return [...kept, { source: null, counts: perDayTotals(rest[0].counts.length, rest), label: t.charts.otherSources(rest.length) }];
}

/** Where each legend item goes, wrapping to as many rows as the sources need. */
function legendLayout(labels: string[], left: number, right: number): { x: number; row: number }[] {
  let [x, row] = [left, 0];
  return labels.map((label) => {
    const itemWidth = 18 + label.length * 7.2 + 16;
    if (x + itemWidth > right && x > left) [x, row] = [left, row + 1];
    const at = { x, row };
    x += itemWidth;
    return at;
  });
}

/** A round step for about `ticks` grid lines up to `max`: 1, 2 or 5 times a power of ten. */
function niceStep(max: number, ticks: number): number {
  const raw = Math.max(max / ticks, 1);
  const power = 10 ** Math.floor(Math.log10(raw));
  return [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw)!;
}

const n = (v: number) => String(Math.round(v * 10) / 10);

class Painter {
  constructor(private readonly palette: ChartPalette | undefined) {}

  open(width: number, height: number, title: string, label: string, kind: string): string {
    const font = this.palette ? ` font-family="${escapeXml(this.palette.fontFamily)}"` : '';
    const background = this.palette ? `<rect width="${width}" height="${height}" fill="${this.palette.background}"/>` : '';
    return (
      `<svg xmlns="http://www.w3.org/2000/svg" class="chart ${kind}" role="img" width="${width}" height="${height}" ` +
      `viewBox="0 0 ${width} ${height}" font-size="${FONT_SIZE}"${font} aria-label="${escapeXml(label)}">` +
      `<title>${escapeXml(title)}</title>${background}`
    );
  }

  text(x: number, y: number, content: string, anchor: 'start' | 'middle' | 'end' = 'start', cls = ''): string {
    const fill = this.palette ? this.palette.text : 'currentColor';
    return `<text x="${n(x)}" y="${n(y)}" text-anchor="${anchor}" fill="${fill}"${cls ? ` class="${cls}"` : ''}>${escapeXml(content)}</text>`;
  }

  line(x1: number, y1: number, x2: number, y2: number): string {
    const stroke = this.palette ? this.palette.grid : 'currentColor';
    const opacity = this.palette ? '' : ' stroke-opacity="0.2"';
    return `<line class="grid" x1="${n(x1)}" y1="${n(y1)}" x2="${n(x2)}" y2="${n(y2)}" stroke="${stroke}"${opacity}/>`;
  }

  bar(x: number, y: number, w: number, h: number, index: number, tip: string): string {
    const fill = this.palette ? ` fill="${this.palette.series[index % this.palette.series.length]}"` : '';
    return `<rect class="bar s${index % SERIES_CLASSES}" x="${n(x)}" y="${n(y)}" width="${n(w)}" height="${n(h)}"${fill}><title>${escapeXml(tip)}</title></rect>`;
  }
}

/** The per-day chart's aria-label: the total, the busiest day, each source's total. */
function perDaySummary(t: Messages, chart: PerDayChart, totals: number[]): string {
  const total = sum(totals);
  const parts = [t.charts.total(total)];
  const busiest = totals.indexOf(Math.max(...totals));
  if (total > 0) parts.push(t.charts.busiest(totals[busiest], shortDate(t, chart.days[busiest])));
  for (const s of chart.series) parts.push(`${seriesName(t, s)} — ${sum(s.counts)}`);
  return parts.join('; ');
}

/** How a chart is drawn: `palette` for a picture (else the page themes it), `width` in units (the picture's by default). */
interface ChartOptions {
  t: Messages;
  palette?: ChartPalette;
  width?: number;
}

/**
 * Leads per day as stacked bars (`bar s<i>` for `series[i]`, past six sources the smallest folded into the sixth);
 * `legend`: the sources under it (the page draws its own, folded the same way).
 */
export function perDaySvg(given: PerDayChart, options: ChartOptions & { legend?: boolean }): string {
  const { t, width = WIDTH } = options;
  const p = new Painter(options.palette);
  const chart = { ...given, series: foldSeries(t, given.series) };
  const [left, right, top, bottom] = [44, 12, 20, PER_DAY_HEIGHT - 30];
  const labels = chart.series.map((s) => `${seriesName(t, s)}: ${sum(s.counts)}`);
  const legend = options.legend ? legendLayout(labels, left, width - right) : [];
  const { height } = perDaySize(options.legend ?? false, (legend.at(-1)?.row ?? 0) + 1, width);
  const totals = perDayTotals(chart.days.length, chart.series);
  const of = chart.source === undefined ? '' : `, ${t.charts.ofSource(sourceName(t, chart.source))}`;
  const title = `${t.charts.perDayTitle(chart.days.length)}${of}`;
  const out = [p.open(width, height, title, `${title}: ${perDaySummary(t, chart, totals)}`, 'per-day')];

  const step = niceStep(Math.max(...totals, 1), 4);
  const max = Math.max(step, Math.ceil(Math.max(...totals, 1) / step) * step);
  const y = (v: number) => bottom - (v / max) * (bottom - top);
  for (let v = 0; v <= max; v += step) {
    out.push(p.line(left, y(v), width - right, y(v)), p.text(left - 6, y(v) + 4, String(v), 'end', 'tick'));
  }
  const slot = (width - left - right) / Math.max(chart.days.length, 1);
  const barWidth = Math.max(slot * 0.72, 1);
  chart.days.forEach((day, d) => {
    const x = left + d * slot + (slot - barWidth) / 2;
    let stacked = 0;
    chart.series.forEach((s, i) => {
      const count = s.counts[d] ?? 0;
      if (count === 0) return;
      const tip = `${shortDate(t, day)} · ${seriesName(t, s)}: ${count}`;
      out.push(p.bar(x, y(stacked + count), barWidth, y(stacked) - y(stacked + count), i, tip));
      stacked += count;
    });
    if ((chart.days.length - 1 - d) % 5 === 0) out.push(p.text(x + barWidth / 2, bottom + 18, shortDate(t, day), 'middle', 'tick'));
  });

  for (const [i, { x, row }] of legend.entries()) {
    const ly = PER_DAY_HEIGHT + row * LEGEND_ROW;
    out.push(`<g class="chart-legend">`, p.bar(x, ly, 12, 12, i, labels[i]), p.text(x + 18, ly + 11, labels[i]), `</g>`);
  }
  out.push('</svg>');
  return out.join('');
}

const FUNNEL_ROW = 30;

/** The window's leads by their status now: a horizontal bar per status (`bar s<i>`, in LEAD_STATUSES' order). */
export function funnelSvg(funnel: Record<LeadStatus, number>, days: number, options: ChartOptions): string {
  const { t, width = WIDTH } = options;
  const p = new Painter(options.palette);
  const height = 12 + LEAD_STATUSES.length * FUNNEL_ROW;
  const title = t.charts.funnelTitle(days);
  const total = sum(LEAD_STATUSES.map((s) => funnel[s]));
  const label = `${title}: ${[t.charts.total(total), ...LEAD_STATUSES.map((s) => `${t.statuses[s]} — ${funnel[s]}`)].join('; ')}`;
  const out = [p.open(width, height, title, label, 'funnel')];
  const [left, right] = [140, 60];
  const max = Math.max(...LEAD_STATUSES.map((s) => funnel[s]), 1);
  LEAD_STATUSES.forEach((status, i) => {
    const top = 8 + i * FUNNEL_ROW;
    const w = ((width - left - right) * funnel[status]) / max;
    out.push(p.text(left - 8, top + 16, t.statuses[status], 'end'));
    if (funnel[status] > 0) out.push(p.bar(left, top + 2, w, FUNNEL_ROW - 8, i, `${t.statuses[status]}: ${funnel[status]}`));
    out.push(p.text(left + w + 6, top + 16, String(funnel[status]), 'start', 'count'));
  });
  out.push('</svg>');
  return out.join('');
}
