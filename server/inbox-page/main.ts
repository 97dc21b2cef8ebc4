import { InboxApi, type Me } from './api';
import { goBack, problem, type App } from './app';
import { renderCharts } from './charts-view';
import { el, show } from './dom';
import { readLaunch } from './launch';
import { renderLead } from './lead-view';
import { renderList } from './list-view';
import { textsFor } from './catalogue';
import { applyTheme } from './theme';

/**
 * The inbox (docs/inbox.md): the list, a lead's page and the charts, one page. Where the manager is lives in the
 * address's query (`?lead=42`, `?view=charts`, the list's filters), so a reload or the back button lands on the same
 * view; the launch data lives in sessionStorage (launch.ts).
 */

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
  // The deployment's language (LEADS_LOCALE, which the server writes into the page) until `me` says it again.
  let t = textsFor(document.documentElement.lang || navigator.language);
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
    const app: App = { api, me: null as unknown as Me, t, launch, root, view: 0, render: () => location.reload() };
    show(root, el('h1', {}, t.title), problem(app, err));
    return;
  }
  t = textsFor(me.locale, me.words);
  document.documentElement.lang = t.lang;
  document.title = t.title;
  const app: App = { api, me, t, launch, root, view: 0, render: () => void render(app) };
  launch.webApp?.BackButton?.onClick(() => goBack(app));
  window.addEventListener('popstate', () => void render(app));
  await render(app);
}

void start();
