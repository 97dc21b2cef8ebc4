import { formatPhone } from '@stickers/shared';
import { LEAD_STATUSES, LEAD_TRANSITIONS, type LeadStatus } from '../../../domain/lead-status';
import { ApiFailure, InboxApi, type Charts, type Filters, type LeadDetail, type LeadItem, type Me } from './api';
import { el, show } from './dom';
import { readLaunch, type Launch } from './launch';
import { textsFor, type Texts } from './texts';
import { applyTheme } from './theme';

/**
 * The inbox (docs/inbox.md): the list, a lead's page and the charts, one page. Where the manager is lives in the
 * address's query (`?lead=42`, `?view=charts`, the list's filters), so a reload or the back button lands on the same
 * view; the launch data lives in sessionStorage (launch.ts).
 */
interface App {
  api: InboxApi;
  me: Me;
  t: Texts;
  launch: Launch;
  root: HTMLElement;
  /** Counts renders: a view whose data arrives after the manager went elsewhere is not shown. */
  view: number;
  /** The sources of the last 30 days (the source field's suggestions), asked for once. */
  sources?: Promise<string[]>;
  /** Whether the manager unfolded the list's filters: kept while the list redraws for each change. */
  filtersOpen?: boolean;
}

function filtersFrom(query: URLSearchParams): Filters {
  return {
    q: query.get('q') ?? '',
    status: query.get('status') ?? '',
    source: query.get('source') ?? '',
    since: query.get('since') ?? '',
    until: query.get('until') ?? '',
  };
}

function go(app: App, query: URLSearchParams, replace = false): void {
  const search = query.toString();
  const url = location.pathname + (search ? `?${search}` : '');
  if (replace) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
  void render(app);
}

/** An in-page link: a real `<a href>` (opens in a new tab with a modifier key), navigated without a reload. */
function link(app: App, query: URLSearchParams, attrs: Record<string, string>, ...children: (Node | string)[]): HTMLAnchorElement {
  const search = query.toString();
  return el(
    'a',
    {
      ...attrs,
      href: location.pathname + (search ? `?${search}` : ''),
      onclick: ((event: MouseEvent) => {
        if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
        event.preventDefault();
        go(app, query);
      }) as EventListener,
    },
    ...children,
  );
}

function time(app: App, iso: string | null): string {
  if (!iso) return '—';
  return new Date(iso).toLocaleString(app.t.lang, { dateStyle: 'short', timeStyle: 'short' });
}

function statusBadge(app: App, status: LeadStatus): HTMLElement {
  return el('span', { class: `badge status-${status}` }, app.t.statusLabel[status]);
}

function failureText(app: App, err: unknown): string {
  if (err instanceof ApiFailure) {
    if (err.status === 401) {
      const why = err.body?.why;
      return app.t.unauthorized[why === 'expired' || why === 'invalid' ? why : 'missing'];
    }
    if (err.status === 403) return app.t.forbidden;
    if (err.status === 503) return err.body?.why === 'membership_unknown' ? app.t.membershipUnknown : app.t.unavailable;
    if (err.status === 404) return app.t.notFound;
  }
  return app.t.failed;
}

function problem(app: App, err: unknown, retry: () => void = () => void render(app)): HTMLElement {
  return el(
    'div',
    { class: 'problem', role: 'alert' },
    el('p', {}, failureText(app, err)),
    el('button', { type: 'button', class: 'secondary', onclick: retry }, app.t.retry),
  );
}

function header(app: App, current: 'list' | 'charts' | null): HTMLElement {
  const tab = (name: 'list' | 'charts', text: string) =>
    link(
      app,
      name === 'charts' ? new URLSearchParams({ view: 'charts' }) : new URLSearchParams(),
      {
        class: 'tab',
        ...(current === name ? { 'aria-current': 'page' } : {}),
      },
      text,
    );
  return el('header', { class: 'top' }, el('nav', { 'aria-label': app.t.nav }, tab('list', app.t.tabList), tab('charts', app.t.tabCharts)));
}

// ——— confirmation ———

/** Asks the manager: Telegram's own dialog when the page runs inside Telegram, else a modal `<dialog>`. */
function confirmAction(app: App, message: string): Promise<boolean> {
  const webApp = app.launch.webApp;
  if (webApp?.showConfirm) {
    const showConfirm = webApp.showConfirm.bind(webApp);
    return new Promise((resolve) => showConfirm(message, resolve));
  }
  return new Promise((resolve) => {
    const text = el('p', { id: 'confirm-text' }, message);
    const dialog = el('dialog', { class: 'confirm', 'aria-labelledby': 'confirm-text' });
    const finish = (ok: boolean) => {
      dialog.close();
      dialog.remove();
      resolve(ok);
    };
    dialog.append(
      text,
      el(
        'div',
        { class: 'row' },
        el('button', { type: 'button', class: 'secondary', onclick: () => finish(false) }, app.t.cancel),
        el('button', { type: 'button', class: 'primary', onclick: () => finish(true) }, app.t.confirm),
      ),
    );
    dialog.addEventListener('cancel', (event) => {
      event.preventDefault();
      finish(false);
    });
    document.body.append(dialog);
    dialog.showModal();
  });
}

// ——— the list ———

function field(id: string, label: string, control: HTMLElement): HTMLElement {
  return el('div', { class: 'field' }, el('label', { for: id }, label), control);
}

function option(value: string, text: string, selected: boolean): HTMLOptionElement {
  return el('option', { value, selected }, text);
}

function leadRow(app: App, lead: LeadItem): HTMLElement {
  const who = lead.anonymised_at
    ? '—'
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
      el('span', { class: 'lead-top' }, el('strong', { class: 'number' }, `№${lead.lead_number}`), statusBadge(app, lead.status)),
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

async function renderList(app: App, query: URLSearchParams): Promise<void> {
  const t = app.t;
  const filters = filtersFrom(query);
  const apply = (change: Partial<Filters>) => {
    const next = { ...filters, ...change };
    const q = new URLSearchParams(Object.entries(next).filter(([, v]) => v !== ''));
    // A field's change and the form's submit may both come from one Enter: the second finds nothing new.
    if (q.toString() !== new URLSearchParams(location.search).toString()) go(app, q, true);
  };

  const search = el('input', {
    id: 'f-q',
    type: 'search',
    name: 'q',
    value: filters.q,
    placeholder: t.searchHint,
    autocomplete: 'off',
    enterkeyhint: 'search',
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
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    apply({ q: search.value, source: source.value.trim() });
  });
  let typing: ReturnType<typeof setTimeout> | undefined;
  search.addEventListener('input', () => {
    clearTimeout(typing);
    typing = setTimeout(() => apply({ q: search.value }), 400);
  });
  status.addEventListener('change', () => apply({ status: status.value }));
  source.addEventListener('change', () => apply({ source: source.value.trim() }));
  since.addEventListener('change', () => apply({ since: since.value }));
  until.addEventListener('change', () => apply({ until: until.value }));

  const list = el('ol', { class: 'leads', 'aria-label': t.title, 'aria-busy': 'true' });
  const count = el('p', { class: 'hint', id: 'count', role: 'status' }, t.loading);
  const moreLeads = el('div', { class: 'more' });
  show(app.root, header(app, 'list'), el('h1', {}, t.title), form, note, count, list, moreLeads);
  if (document.activeElement === document.body && filters.q) search.focus();

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
      show(moreLeads, problem(app, err));
      count.textContent = '';
      return;
    }
    list.append(...page.leads.map((lead) => leadRow(app, lead)));
    shown += page.leads.length;
    count.textContent = shown === 0 ? t.empty : t.found(shown, page.next_cursor !== null);
    const next = page.next_cursor;
    show(moreLeads, next ? el('button', { type: 'button', class: 'secondary wide', onclick: () => void load(next) }, t.more) : null);
    list.setAttribute('aria-busy', 'false');
  };
  await load(null);
}

// ——— a lead ———

function dl(rows: [string, Node | string | null][]): HTMLElement {
  return el(
    'dl',
    { class: 'fields' },
    rows.flatMap(([k, v]) => [el('dt', {}, k), el('dd', {}, v ?? '—')]),
  );
}

function personal(app: App, lead: LeadItem, value: string | number | null): string | null {
  if (value !== null && value !== '') return String(value);
  if (lead.anonymised_at) return '—';
  return app.me.card_pii ? null : app.t.hiddenPii;
}

function section(title: string, ...children: (Node | null)[]): HTMLElement {
  return el('section', {}, el('h2', {}, title), ...children);
}

function list(items: string[], empty: string): HTMLElement {
  return items.length
    ? el(
        'ul',
        { class: 'plain' },
        items.map((i) => el('li', {}, i)),
      )
    : el('p', { class: 'hint' }, empty);
}

function externalLink(app: App, url: string, text: string, className?: string): HTMLAnchorElement {
  const webApp = app.launch.webApp;
  return el(
    'a',
    {
      href: url,
      class: className,
      target: '_blank',
      rel: 'noopener noreferrer',
      onclick: ((event: MouseEvent) => {
        if (webApp?.openTelegramLink && url.startsWith('https://t.me/')) {
          event.preventDefault();
          webApp.openTelegramLink(url);
        }
      }) as EventListener,
    },
    text,
  );
}

/** The lead's phone as people read it, dialled by a tap (`tel:` with the stored E.164 number). */
function phoneLink(phone: string): HTMLAnchorElement {
  return el('a', { href: `tel:${phone}`, class: 'contact' }, formatPhone(phone));
}

/** The lead's username, opening the chat with them (`t.me`, as the card's "✈️ Написать" button does). */
function usernameLink(app: App, telegram: string): HTMLAnchorElement {
  const name = telegram.replace(/^@/, '');
  return externalLink(app, `https://t.me/${encodeURIComponent(name)}`, `@${name}`, 'contact');
}

/**
 * A repeat as the card's repeat block shows it: when, the fields that differ with their values (or that they are
 * hidden), "same data" when none does, and which contact alone matched when the other one differs.
 */
function repeatBlock(app: App, lead: LeadItem, repeat: LeadDetail['repeats'][number]): HTMLElement[] {
  const t = app.t;
  const lines: HTMLElement[] = [el('strong', {}, t.repeatAt(time(app, repeat.at)))];
  if (lead.anonymised_at) return lines;
  const changed = (Object.keys(t.fields) as (keyof typeof t.fields)[]).filter(
    (f): f is keyof LeadDetail['repeats'][number]['changes'] => f in repeat.changes,
  );
  const shown = changed.filter((f) => repeat.changes[f] !== null);
  const rows: [string, Node | string | null][] = shown.map((f) => {
    const value = repeat.changes[f]!;
    if (f === 'phone') return [t.fields[f], phoneLink(value)];
    if (f === 'telegram') return [t.fields[f], usernameLink(app, value)];
    return [t.fields[f], value];
  });
  if (rows.length) lines.push(dl(rows));
  if (shown.length < changed.length) lines.push(el('span', { class: 'hint' }, t.repeatHidden));
  if (changed.length === 0) lines.push(el('span', { class: 'hint' }, t.repeatSame));
  // A repeat is matched by username or by phone: a different phone means only the (public) username matched.
  if ('phone' in repeat.changes) lines.push(el('strong', { class: 'warn' }, t.repeatByUsername));
  if ('telegram' in repeat.changes) lines.push(el('strong', { class: 'warn' }, t.repeatByPhone));
  return lines;
}

async function renderLead(app: App, n: number, message: string | null = null): Promise<void> {
  const view = app.view;
  const t = app.t;
  show(app.root, header(app, null), el('p', { class: 'hint' }, t.loading));
  let detail: LeadDetail;
  try {
    detail = await app.api.lead(n);
  } catch (err) {
    if (view !== app.view) return;
    show(app.root, header(app, null), backLink(app), problem(app, err));
    return;
  }
  if (view !== app.view) return;
  const lead = detail.lead;
  const note = el('p', { class: 'note', role: 'status', id: 'lead-note' }, message ?? '');
  const src = lead.source;
  const sourceRows: [string, string | null][] = src
    ? (Object.keys(t.sourceFields) as (keyof typeof t.sourceFields)[]).filter((k) => src[k]).map((k) => [t.sourceFields[k], src[k]])
    : [];
  const consent = lead.consent;

  const actions = el('div', { class: 'row wrap actions' });
  for (const to of LEAD_TRANSITIONS[lead.status] as readonly LeadStatus[]) {
    actions.append(
      el(
        'button',
        {
          type: 'button',
          class: to === 'spam' ? 'danger' : 'primary',
          'data-status': to,
          onclick: () => void changeStatus(app, lead, to),
        },
        t.statusButton(lead.status, to),
      ),
    );
  }

  show(
    app.root,
    header(app, null),
    backLink(app),
    el('h1', {}, t.lead(lead.lead_number), ' ', statusBadge(app, lead.status)),
    note,
    detail.card_url ? el('p', {}, externalLink(app, detail.card_url, t.cardLink)) : el('p', { class: 'hint' }, t.noCard),
    lead.anonymised_at ? el('p', { class: 'hint' }, t.anonymised(time(app, lead.anonymised_at))) : null,
    section(t.actions, actions),
    dl([
      [t.fields.name, personal(app, lead, lead.name)],
      [t.fields.telegram, lead.telegram ? usernameLink(app, lead.telegram) : personal(app, lead, null)],
      [t.fields.phone, lead.phone ? phoneLink(lead.phone) : personal(app, lead, null)],
      [t.fields.date, personal(app, lead, lead.date)],
      [t.fields.guests, personal(app, lead, lead.guests)],
      [t.fields.comment, personal(app, lead, lead.comment)],
      [t.fields.created, time(app, lead.created_at)],
      [t.fields.received, time(app, lead.received_at)],
      [t.fields.published, time(app, lead.published_at)],
    ]),
    section(t.sourceTitle, sourceRows.length ? dl(sourceRows) : el('p', { class: 'hint' }, t.noSource)),
    section(
      t.consent,
      el(
        'p',
        {},
        consent ? t.consentAccepted(time(app, consent.accepted_at)) : t.consentNone,
        consent?.policy_url ? [' · ', externalLink(app, consent.policy_url, t.policy)] : null,
      ),
    ),
    section(
      t.repeats,
      detail.repeats.length
        ? el(
            'ul',
            { class: 'plain repeats' },
            [...detail.repeats].reverse().map((r) => el('li', {}, repeatBlock(app, lead, r))),
          )
        : el('p', { class: 'hint' }, t.noRepeats),
    ),
    section(
      t.history,
      list(
        detail.history.map((h) => `${time(app, h.at)} · ${t.historyLine(t.statusLabel[h.status] ?? h.status, h.by)}`),
        t.noHistory,
      ),
    ),
    section(
      t.events,
      list(
        detail.events.map((e) => `${time(app, e.at)} · ${(t.eventKinds as Record<string, string>)[e.kind] ?? t.eventOther}`),
        t.noEvents,
      ),
    ),
    app.me.manager && !lead.anonymised_at
      ? section(t.erase, el('button', { type: 'button', class: 'danger', id: 'erase', onclick: () => void erase(app, lead) }, t.erase))
      : null,
  );
}

function backLink(app: App): HTMLElement {
  return el('p', {}, link(app, new URLSearchParams(sessionStorage.getItem('inbox.list') ?? ''), { class: 'back' }, `← ${app.t.back}`));
}

async function changeStatus(app: App, lead: LeadItem, to: LeadStatus): Promise<void> {
  const t = app.t;
  if (!(await confirmAction(app, t.confirmStatus(lead.lead_number, t.statusLabel[to])))) return;
  let message: string;
  try {
    const { lead: changed } = await app.api.setStatus(lead.lead_number, to, lead.status);
    message = t.statusChanged(t.statusLabel[changed.status]);
  } catch (err) {
    const current = err instanceof ApiFailure && err.status === 409 ? (err.body?.status as LeadStatus | undefined) : undefined;
    message = current ? t.conflict(t.statusLabel[current] ?? current) : failureText(app, err);
  }
  await renderLead(app, lead.lead_number, message);
}

async function erase(app: App, lead: LeadItem): Promise<void> {
  const t = app.t;
  if (!(await confirmAction(app, t.confirmErase(lead.lead_number)))) return;
  let message: string;
  try {
    await app.api.erase(lead.lead_number);
    message = t.erased;
  } catch (err) {
    message = failureText(app, err);
  }
  await renderLead(app, lead.lead_number, message);
}

// ——— the charts ———

async function renderCharts(app: App, query: URLSearchParams): Promise<void> {
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

// ——— start ———

async function render(app: App): Promise<void> {
  const query = new URLSearchParams(location.search);
  const lead = Number(query.get('lead'));
  const back = app.launch.webApp?.BackButton;
  app.view += 1;
  window.scrollTo(0, 0);
  if (Number.isInteger(lead) && lead > 0) {
    back?.show();
    await renderLead(app, lead);
  } else if (query.get('view') === 'charts') {
    back?.show();
    await renderCharts(app, query);
  } else {
    back?.hide();
    sessionStorage.setItem('inbox.list', query.toString());
    await renderList(app, query);
  }
}

async function start(): Promise<void> {
  const root = document.getElementById('app')!;
  const launch = readLaunch();
  let t = textsFor(navigator.language);
  if (!launch) {
    applyTheme({});
    // In development the server names the local sandbox's page, whose links launch the inbox as Telegram would.
    const sandbox = document.querySelector<HTMLMetaElement>('meta[name="inbox-sandbox"]')?.content;
    show(
      root,
      el('h1', {}, t.title),
      el('p', { role: 'alert' }, t.noLaunch),
      sandbox ? el('p', { id: 'sandbox-hint' }, t.noLaunchSandbox, ' ', el('a', { href: sandbox }, t.sandboxLink)) : null,
    );
    return;
  }
  applyTheme(launch.themeParams);
  launch.webApp?.ready?.();
  launch.webApp?.expand?.();
  launch.webApp?.onEvent?.('themeChanged', () => applyTheme(launch.webApp?.themeParams ?? {}));
  const api = new InboxApi(launch.initData);
  let me: Me;
  try {
    me = await api.me();
  } catch (err) {
    const app: App = { api, me: null as unknown as Me, t, launch, root, view: 0 };
    show(
      root,
      el('h1', {}, t.title),
      problem(app, err, () => location.reload()),
    );
    return;
  }
  t = textsFor(me.locale, me.words);
  document.documentElement.lang = t.lang;
  document.title = t.title;
  const app: App = { api, me, t, launch, root, view: 0 };
  launch.webApp?.BackButton?.onClick(() => history.back());
  window.addEventListener('popstate', () => void render(app));
  await render(app);
}

void start();
