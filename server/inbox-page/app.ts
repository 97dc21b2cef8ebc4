import type { LeadStatus } from '../src/domain/lead-status';
import { ApiFailure, type InboxApi, type Me } from './api';
import { el } from './dom';
import type { Launch } from './launch';
import type { Texts } from './texts';

/** What every view shares: the app's state, in-page navigation, and the pieces each view draws with. */

/** The page's state: who the manager is, their texts and launch, where the views draw. */
export interface App {
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
  /** Draws the view the address names (main.ts); before the manager is known, loads the page again. */
  render(): void;
}

/**
 * Goes to the view `query` names: a new history entry, or in place of the current one (`replace`). An entry the page
 * added is marked (`{ inbox: true }`), so the back button knows there is a view of the page to go back to.
 */
export function go(app: App, query: URLSearchParams, replace = false): void {
  const search = query.toString();
  const url = location.pathname + (search ? `?${search}` : '');
  if (replace) history.replaceState(history.state, '', url);
  else history.pushState({ inbox: true }, '', url);
  app.render();
}

/**
 * Telegram's back button: the view before, or the list as last filtered when the page was opened on a lead or the
 * charts (a reload there leaves no view of the page behind it).
 */
export function goBack(app: App): void {
  if ((history.state as { inbox?: boolean } | null)?.inbox) history.back();
  else go(app, new URLSearchParams(sessionStorage.getItem('inbox.list') ?? ''), true);
}

/** An in-page link: a real `<a href>` (opens in a new tab with a modifier key), navigated without a reload. */
export function link(app: App, query: URLSearchParams, attrs: Record<string, string>, ...children: (Node | string)[]): HTMLAnchorElement {
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

export function time(app: App, iso: string | null): string {
  if (!iso) return '—';
  // In LEADS_TIMEZONE and written as the card writes it (`29.11.2026 10:30`, `11/29/2026 10:30 AM`), not in the zone of
  // the manager's phone.
  const at = new Date(iso);
  const timeZone = app.me.timezone;
  const day = at.toLocaleDateString(app.t.lang, { day: '2-digit', month: '2-digit', year: 'numeric', timeZone });
  return `${day} ${at.toLocaleTimeString(app.t.lang, { hour: '2-digit', minute: '2-digit', timeZone })}`;
}

export function statusBadge(app: App, status: LeadStatus): HTMLElement {
  return el('span', { class: `badge status-${status}` }, app.t.statusLabel[status]);
}

/** What went wrong, in the manager's words; `change`: a status change, a message or an erasure (its 403 is the managers' list). */
export function failureText(app: App, err: unknown, change = false): string {
  if (err instanceof ApiFailure) {
    if (err.status === 401) {
      const why = err.body?.why;
      return app.t.unauthorized[why === 'expired' || why === 'invalid' ? why : 'missing'];
    }
    if (err.status === 403) return change ? app.t.actionForbidden : app.t.forbidden;
    if (err.status === 409 && err.body?.error === 'anonymised') return app.t.erasedMeanwhile;
    if (err.status === 429) return app.t.tooMany;
    if (err.status === 503) return err.body?.why === 'membership_unknown' ? app.t.membershipUnknown : app.t.unavailable;
    if (err.status === 404) return app.t.notFound;
  }
  return app.t.failed;
}

/** What went wrong, and a button to try again, but where trying again cannot help (no such lead). */
export function problem(app: App, err: unknown, retry: () => void = () => app.render()): HTMLElement {
  const final = err instanceof ApiFailure && err.status === 404;
  return el(
    'div',
    { class: 'problem', role: 'alert' },
    el('p', {}, failureText(app, err)),
    final ? null : el('button', { type: 'button', class: 'secondary', onclick: retry }, app.t.retry),
  );
}

export function header(app: App, current: 'list' | 'charts' | null): HTMLElement {
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

export function field(id: string, label: string, control: HTMLElement): HTMLElement {
  return el('div', { class: 'field' }, el('label', { for: id }, label), control);
}

export function option(value: string, text: string, selected: boolean): HTMLOptionElement {
  return el('option', { value, selected }, text);
}

export function section(title: string, ...children: (Node | null)[]): HTMLElement {
  return el('section', {}, el('h2', {}, title), ...children);
}
