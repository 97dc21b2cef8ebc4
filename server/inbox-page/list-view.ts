import { formatPhone } from '@stickers/shared';
import { SEARCH_MAX } from '../src/domain/lead';
import { LEAD_STATUSES } from '../src/domain/lead-status';
import { ApiFailure, type Filters, type LeadItem } from './api';
import { field, go, header, link, option, problem, statusBadge, time, type App } from './app';
import { el, show } from './dom';

/** The list of leads: the search, the folded filters (kept in the address), the CSV, pages of leads. */

function filtersFrom(query: URLSearchParams): Filters {
  return {
    q: query.get('q') ?? '',
    status: query.get('status') ?? '',
    source: query.get('source') ?? '',
    since: query.get('since') ?? '',
    until: query.get('until') ?? '',
  };
}

function leadRow(app: App, lead: LeadItem, waiting = 0): HTMLElement {
  const who = lead.anonymised_at
    ? `— (${app.t.eventKinds.anonymised.toLowerCase()})`
    : [
        lead.name,
        lead.telegram ? `@${lead.telegram.replace(/^@/, '')}` : null,
        lead.phone ? formatPhone(lead.phone).replace(/ /g, '\u00a0') : null,
      ]
        .filter(Boolean)
        .join(' · ');
  return el(
    'li',
    { class: 'lead' },
    link(
      app,
      new URLSearchParams({ lead: String(lead.lead_number) }),
      { class: 'lead-link' },
      el(
        'span',
        { class: 'lead-top' },
        el('strong', { class: 'number' }, app.t.leadNumber(lead.lead_number)),
        // The visitor wrote and nobody answered yet: who waits, seen from the list.
        waiting ? el('span', { class: 'waiting' }, app.t.waiting(waiting)) : null,
        statusBadge(app, lead.status),
      ),
      el('span', { class: 'who' }, who || (app.me.card_pii ? '—' : app.t.hiddenPii)),
      el(
        'span',
        { class: 'meta' },
        [time(app, lead.created_at), lead.source?.landing ?? null, lead.repeats ? `↻ ${lead.repeats}` : null].filter(Boolean).join(' · '),
      ),
    ),
  );
}

async function saveCsv(app: App, filters: Filters, note: HTMLElement): Promise<void> {
  try {
    const { blob, name } = await app.api.csv(filters);
    const url = URL.createObjectURL(blob);
    const a = el('a', { href: url, download: name, hidden: true });
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 60_000);
  } catch {
    note.textContent = app.t.csvFailed;
  }
}

export async function renderList(app: App, query: URLSearchParams): Promise<void> {
  const t = app.t;
  const view = app.view;
  const filters = filtersFrom(query);
  const apply = (change: Partial<Filters>) => {
    const next = { ...filters, ...change };
    const q = new URLSearchParams(Object.entries(next).filter(([, v]) => v !== ''));
    // A field's change and the form's submit may both come from one Enter: the second finds nothing new.
    if (q.toString() === new URLSearchParams(location.search).toString()) return;
    // The filters stay as they are shown: a change made as they unfold comes before their `toggle` event (a task later).
    app.filtersOpen = folded.open;
    go(app, q, true);
  };

  const search = el('input', {
    id: 'f-q',
    type: 'search',
    name: 'q',
    value: filters.q,
    placeholder: t.searchHint,
    autocomplete: 'off',
    enterkeyhint: 'search',
    // The API's limit for a search (a longer one is refused).
    maxlength: SEARCH_MAX,
  });
  const status = el(
    'select',
    { id: 'f-status', name: 'status' },
    option('', t.anyStatus, !filters.status),
    LEAD_STATUSES.map((s) => option(s, t.statusLabel[s], filters.status === s)),
  );
  const sources = el('datalist', { id: 'f-sources' });
  const source = el('input', {
    id: 'f-source',
    name: 'source',
    value: filters.source,
    list: 'f-sources',
    placeholder: t.anySource,
    autocomplete: 'off',
  });
  const since = el('input', { id: 'f-since', type: 'date', name: 'since', value: filters.since });
  const until = el('input', { id: 'f-until', type: 'date', name: 'until', value: filters.until });
  const note = el('p', { class: 'note', role: 'status' });
  // The search stays in sight; the rest folds away (a phone's first screen is for the leads), its summary counting
  // the filters that are on.
  const active = [filters.status, filters.source, filters.since || filters.until].filter(Boolean).length;
  const folded = el(
    'details',
    { class: 'more-filters', id: 'filters', open: app.filtersOpen ?? false },
    el('summary', {}, t.filters(active)),
    el('div', { class: 'row wrap' }, field('f-status', t.status, status), field('f-source', t.source, source), sources),
    el(
      'fieldset',
      { class: 'row wrap period' },
      el('legend', {}, t.period),
      field('f-since', t.since, since),
      field('f-until', t.until, until),
    ),
    el(
      'div',
      { class: 'row' },
      el('button', { type: 'button', class: 'secondary', onclick: () => go(app, new URLSearchParams(), true) }, t.reset),
      el('button', { type: 'button', class: 'secondary', onclick: () => void saveCsv(app, filters, note) }, t.csv),
    ),
  );
  folded.addEventListener('toggle', () => (app.filtersOpen = folded.open));
  const form = el('form', { class: 'filters', role: 'search' }, field('f-q', t.search, search), folded);
  let typing: ReturnType<typeof setTimeout> | undefined;
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    clearTimeout(typing);
    apply({ q: search.value, source: source.value.trim() });
  });
  // Enter (the keyboard's search key) sends the search and the source at once: the form has several fields and no
  // submit button, so the browser would not submit it by itself.
  for (const input of [search, source])
    input.addEventListener('keydown', (event) => {
      if (event.key !== 'Enter' || event.isComposing) return;
      event.preventDefault();
      form.requestSubmit();
    });
  search.addEventListener('input', () => {
    clearTimeout(typing);
    // Only while this list is still shown: a lead opened within the pause stays open.
    typing = setTimeout(() => view === app.view && apply({ q: search.value }), 400);
  });
  status.addEventListener('change', () => apply({ status: status.value }));
  source.addEventListener('change', () => apply({ source: source.value.trim() }));
  since.addEventListener('change', () => apply({ since: since.value }));
  until.addEventListener('change', () => apply({ until: until.value }));

  const list = el('ol', { class: 'leads', 'aria-label': t.title, 'aria-busy': 'true' });
  const count = el('p', { class: 'hint', id: 'count', role: 'status' }, t.loading);
  const moreLeads = el('div', { class: 'more' });
  show(app.root, header(app, 'list'), el('h1', {}, t.title), form, note, count, list, moreLeads);
  // The search redraws with the list while the manager types: the caret goes back to the end of what they typed.
  if (document.activeElement === document.body && filters.q) {
    search.focus();
    search.setSelectionRange(search.value.length, search.value.length);
  }

  // The sources the charts know (last 30 days) are the source field's suggestions.
  app.sources ??= app.api.charts('').then(
    (charts) => charts.per_day.map((s) => s.source).filter((s): s is string => s !== null),
    () => [],
  );
  void app.sources.then((known) =>
    sources.replaceChildren(...known.map((s) => el('option', { value: s })), el('option', { value: 'none' }, t.noSource)),
  );

  let shown = 0;
  const load = async (cursor: string | null) => {
    list.setAttribute('aria-busy', 'true');
    let page;
    try {
      page = await app.api.leads(filters, cursor);
    } catch (err) {
      count.textContent = '';
      list.setAttribute('aria-busy', 'false');
      // A filter the API refuses (a source that is no landing's name, a search too long): which, not the connection.
      const refused = err instanceof ApiFailure && err.status === 422 ? err.body?.errors : null;
      if (refused && typeof refused === 'object') {
        const labels: Record<string, string> = { q: t.search, status: t.status, source: t.source, since: t.since, until: t.until };
        const names = Object.keys(refused).map((k) => labels[k] ?? k);
        show(moreLeads, el('p', { class: 'problem', role: 'alert', id: 'invalid-filter' }, t.invalidFilter(names)));
      } else show(moreLeads, problem(app, err));
      return;
    }
    list.append(...page.leads.map((lead) => leadRow(app, lead, page.waiting?.[lead.lead_number])));
    shown += page.leads.length;
    count.textContent = shown === 0 ? t.empty : t.found(shown, page.next_cursor !== null);
    const next = page.next_cursor;
    // Pressed once: a second press before the page arrives would ask for the same page again.
    const more = el('button', { type: 'button', class: 'secondary wide' }, t.more);
    more.addEventListener('click', () => {
      more.disabled = true;
      void load(next);
    });
    show(moreLeads, next ? more : null);
    list.setAttribute('aria-busy', 'false');
  };
  // A period whose first day is after its last: the API would refuse it (422), which is no connection's fault.
  if (filters.since && filters.until && filters.since > filters.until) {
    count.textContent = t.periodReversed;
    list.setAttribute('aria-busy', 'false');
    return;
  }
  await load(null);
}
