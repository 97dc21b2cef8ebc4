import { escapeXml, funnelSvg, LIGHT_PALETTE, perDaySize, perDaySvg } from './chart-svg';
import { PNG_SIGNATURE, svgToPng } from './chart-png';
import { ru } from '../i18n/ru';
import { en } from '../i18n/en';

/** Every character XML 1.0 refuses or discourages: C0 and C1 controls, DEL, lone surrogates, all 66 noncharacters. */
const BAD = [
  ...Array.from({ length: 0x20 }, (_, i) => i).filter((cp) => ![0x09, 0x0a, 0x0d].includes(cp)),
  ...Array.from({ length: 0x21 }, (_, i) => 0x7f + i),
  ...Array.from({ length: 0x20 }, (_, i) => 0xfdd0 + i),
  ...Array.from({ length: 17 }, (_, plane) => [plane * 0x10000 + 0xfffe, plane * 0x10000 + 0xffff]).flat(),
]
  .map((cp) => String.fromCodePoint(cp))
  .concat(['\uD800', '\uDBFF', '\uDC00', '\uDFFF']);

/** `word` with every bad character around it (a lone surrogate never next to another, so none makes a pair). */
const dirty = (word: string) => BAD.map((ch) => `${word}${ch}`).join('');

/** What an XML 1.0 parser accepts as a character (the `Char` production), without the discouraged ones. */
const XML_TEXT = /^[\t\n\r\u0020-\u007E\u00A0-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]*$/u;

describe('the charts as SVG take any text', () => {
  it('escapeXml drops every character XML does not allow and escapes markup', () => {
    for (const ch of BAD) expect(escapeXml(`a${ch}b`)).toBe('ab');
    expect(escapeXml('a\uD800b\uFFFE<c>&"\'😀\tи\uDE00')).toBe('ab&lt;c&gt;&amp;&quot;&apos;😀\tи');
    expect(escapeXml(dirty('-'))).toBe('-'.repeat(BAD.length));
  });

  it('a per-day chart with every bad character in its sources, legend and title is still drawn as a PNG', () => {
    const chart = {
      days: ['2026-11-28', '2026-11-29'],
      series: [
        { source: dirty('wedding'), counts: [1, 2] },
        { source: `\uFFFE${dirty('')}`, counts: [1, 0] },
        { source: null, counts: [0, 1] },
      ],
      source: dirty('promo'),
    };
    const svg = perDaySvg(chart, { t: ru, palette: LIGHT_PALETTE, legend: true });
    expect(svg).toMatch(XML_TEXT);
    expect(svg).not.toMatch(/\p{Noncharacter_Code_Point}/u);
    expect(svg).toContain('wedding'.repeat(BAD.length));
    const { png, width } = svgToPng(svg);
    expect(png.subarray(0, 8)).toEqual(PNG_SIGNATURE);
    expect(width).toBe(720);
  });

  it('the funnel with every bad character in its words is still drawn as a PNG', () => {
    const t = { ...ru, statuses: { ...ru.statuses, new: dirty('Новая') }, charts: { ...ru.charts, funnelTitle: () => dirty('Воронка') } };
    const svg = funnelSvg({ new: 3, in_progress: 1, won: 1, lost: 0, spam: 0 }, 30, { t, palette: LIGHT_PALETTE });
    expect(svg).toMatch(XML_TEXT);
    expect(svg).toContain('Новая'.repeat(BAD.length));
    expect(svgToPng(svg).png.subarray(0, 8)).toEqual(PNG_SIGNATURE);
  });
});

describe("the digest's picture names every colour in its legend", () => {
  const days = ['2026-11-28', '2026-11-29'];
  const legendItems = (svg: string) =>
    [...svg.matchAll(/<g class="chart-legend"><rect [^>]*fill="([^"]+)"><title>([^<]*)<\/title><\/rect>/g)].map((m) => ({
      fill: m[1],
      label: m[2],
    }));
  const height = (svg: string) => Number(/^<svg [^>]*height="(\d+)"/.exec(svg)![1]);

  it('ten sources: the five largest and one "others" series, six colours, each in the legend with its total', () => {
    const series = [
      ...Array.from({ length: 9 }, (_, i) => ({ source: `landing${i + 1}`, counts: [10 - i, 1] })),
      { source: null, counts: [1, 0] },
    ];
    const svg = perDaySvg({ days, series }, { t: ru, palette: LIGHT_PALETTE, legend: true });
    const items = legendItems(svg);
    expect(items.map((i) => i.label)).toEqual([
      'landing1: 11',
      'landing2: 10',
      'landing3: 9',
      'landing4: 8',
      'landing5: 7',
      // landing6…landing9 (6 + 5 + 4 + 3) and the leads without a source (1).
      'другие (5): 19',
    ]);
    expect(new Set(items.map((i) => i.fill)).size).toBe(6);
    // Every bar has a colour the legend names.
    const barFills = new Set([...svg.matchAll(/class="bar s\d"[^>]*fill="([^"]+)"/g)].map((m) => m[1]));
    expect([...barFills].every((f) => items.some((i) => i.fill === f))).toBe(true);
  });

  it('long landing names: the legend wraps to as many rows as it needs and the picture grows to hold them', () => {
    const long = (n: number) => `landing-with-a-rather-long-name-number-${n}-0123456789012345678901`;
    const series = Array.from({ length: 6 }, (_, i) => ({ source: long(i), counts: [1, 1] }));
    const svg = perDaySvg({ days, series }, { t: ru, palette: LIGHT_PALETTE, legend: true });
    expect(legendItems(svg).map((i) => i.label)).toEqual(series.map((s) => `${s.source}: 2`));
    const rows = new Set([...svg.matchAll(/<g class="chart-legend"><rect [^>]*y="([\d.]+)"/g)].map((m) => m[1])).size;
    expect(rows).toBeGreaterThan(2);
    expect(height(svg)).toBe(perDaySize(true, rows).height);
    expect(svgToPng(svg).height).toBe(height(svg));
    // Two sources with short names keep the usual size.
    expect(
      height(
        perDaySvg(
          { days, series: series.slice(0, 2).map((s, i) => ({ ...s, source: `s${i}` })) },
          { t: ru, palette: LIGHT_PALETTE, legend: true },
        ),
      ),
    ).toBe(perDaySize(true).height);
  });
});

describe('the per-day chart writes its days as the locale does (requirements §17.2)', () => {
  const chart = { days: ['2026-11-30', '2026-12-01'], series: [{ source: 'wedding', counts: [0, 3] }] };
  const ticks = (svg: string) => [...svg.matchAll(/class="tick">([^<]*)</g)].map((m) => m[1]).filter((v) => /\D/.test(v));

  it("ru: day.month; en: month/day, in the axis, the bars' titles and the summary", () => {
    const ruSvg = perDaySvg(chart, { t: ru, palette: LIGHT_PALETTE, legend: true });
    expect(ticks(ruSvg)).toEqual(['01.12']);
    expect(ruSvg).toContain('<title>01.12 · wedding: 3</title>');
    const enSvg = perDaySvg(chart, { t: en, palette: LIGHT_PALETTE, legend: true });
    // "01.12" would read as January 12 to an English reader.
    expect(ticks(enSvg)).toEqual(['12/01']);
    expect(enSvg).toContain('<title>12/01 · wedding: 3</title>');
    expect(enSvg).toContain('most 3 on 12/01');
    expect(enSvg).not.toContain('01.12');
  });
});
