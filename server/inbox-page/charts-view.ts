import type { Charts } from './api';
import { field, go, header, option, problem, section, type App } from './app';
import { el, show } from './dom';

/** The charts of the last 30 days (the server draws the SVGs), of every source or of one. */

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
  const legend = el(
    'ul',
    { class: 'legend', 'aria-label': t.legend },
    charts.per_day.map((s, i) =>
      el(
        'li',
        {},
        el('span', { class: `swatch s${i % 6}`, 'aria-hidden': 'true' }),
        `${s.source ?? t.noSource}: ${s.counts.reduce((a, b) => a + b, 0)}`,
      ),
    ),
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
