import type { Charts } from './api';
import { field, go, header, option, problem, section, type App } from './app';
import { el, show } from './dom';

/** The charts of the last 30 days (the server draws the SVGs), of every source or of one. */

/** The colours of the per-day chart (`.swatch.s0`…`.s5`, the server's bar classes). */
const SWATCHES = 6;

export async function renderCharts(app: App, query: URLSearchParams): Promise<void> {
  const view = app.view;
  const t = app.t;
  const source = query.get('source') ?? '';
  show(app.root, header(app, 'charts'), el('h1', {}, t.chartsTitle), el('p', { class: 'hint' }, t.loading));
  let charts: Charts;
  try {
    charts = await app.api.charts(source);
  } catch (err) {
    if (view !== app.view) return;
    show(app.root, header(app, 'charts'), el('h1', {}, t.chartsTitle), problem(app, err));
    return;
  }
  if (view !== app.view) return;
  const pick = el(
    'select',
    { id: 'c-source' },
    option('', t.anySource, !source),
    charts.per_day.map((s) =>
      s.source === null ? option('none', t.noSource, source === 'none') : option(s.source, s.source, source === s.source),
    ),
  );
  if (source && ![...pick.options].some((o) => o.value === source)) pick.append(option(source, source, true));
  pick.addEventListener('change', () =>
    go(app, new URLSearchParams(pick.value ? { view: 'charts', source: pick.value } : { view: 'charts' }), true),
  );
  // One colour a source, as the server's chart draws them: past six sources the smallest are one "others" entry.
  const total = (counts: number[]) => counts.reduce((a, b) => a + b, 0);
  const entries = charts.per_day.map((s) => ({ name: s.source ?? t.noSource, count: total(s.counts) }));
  const rest = entries.length > SWATCHES ? entries.splice(SWATCHES - 1) : [];
  if (rest.length > 0) entries.push({ name: t.otherSources(rest.length), count: rest.reduce((a, e) => a + e.count, 0) });
  const legend = el(
    'ul',
    { class: 'legend', 'aria-label': t.legend },
    entries.map((e, i) => el('li', {}, el('span', { class: `swatch s${i}`, 'aria-hidden': 'true' }), `${e.name}: ${e.count}`)),
  );
  const svg = (markup: string) => {
    const box = el('div', { class: 'chart-box' });
    // Our own server's SVG (drawn with currentColor and CSS classes so the theme colours it).
    box.innerHTML = markup;
    return box;
  };
  show(
    app.root,
    header(app, 'charts'),
    el('h1', {}, t.chartsTitle),
    el('div', { class: 'row wrap' }, field('c-source', t.source, pick)),
    section(t.perDay, svg(charts.svg.per_day), legend),
    section(t.funnel, svg(charts.svg.funnel)),
    section(
      t.median,
      el(
        'p',
        { class: 'big', id: 'median' },
        charts.median_first_change_s === null ? t.medianNone : t.duration(charts.median_first_change_s),
      ),
    ),
  );
}
