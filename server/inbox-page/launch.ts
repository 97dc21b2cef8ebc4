/** The part of `window.Telegram.WebApp` the page uses, when a host page (Telegram's client) provides it. */
export interface TelegramWebApp {
  initData: string;
  themeParams?: Record<string, string>;
  platform?: string;
  version?: string;
  ready?: () => void;
  expand?: () => void;
  showConfirm?: (message: string, callback: (ok: boolean) => void) => void;
  openTelegramLink?: (url: string) => void;
  onEvent?: (event: string, handler: () => void) => void;
  BackButton?: { show: () => void; hide: () => void; onClick: (handler: () => void) => void; offClick: (handler: () => void) => void };
}

declare global {
  interface Window {
    Telegram?: { WebApp?: TelegramWebApp };
  }
}

/** What Telegram launched the page with. */
export interface Launch {
  initData: string;
  themeParams: Record<string, string>;
  platform: string;
  version: string;
  /** Telegram's own object, when the host page gave one. */
  webApp: TelegramWebApp | null;
}

const STORAGE_KEY = 'inbox.launch';

/** The `tgWebApp…` parameters of a launch URL's fragment, or null when it has none. */
export function launchFromHash(hash: string): Omit<Launch, 'webApp'> | null {
  const params = new URLSearchParams(hash.replace(/^#/, ''));
  const initData = params.get('tgWebAppData');
  if (!initData) return null;
  return {
    initData,
    themeParams: parseTheme(params.get('tgWebAppThemeParams')),
    platform: params.get('tgWebAppPlatform') ?? 'unknown',
    version: params.get('tgWebAppVersion') ?? '',
  };
}

function parseTheme(json: string | null): Record<string, string> {
  if (!json) return {};
  try {
    const value: unknown = JSON.parse(json);
    if (!value || typeof value !== 'object') return {};
    return Object.fromEntries(Object.entries(value).filter((e): e is [string, string] => typeof e[1] === 'string'));
  } catch {
    return {};
  }
}

/**
 * The launch, as Telegram's SDK finds it: `window.Telegram.WebApp` when the host gave one, else the URL's fragment
 * (kept in sessionStorage and taken off the address, so a reload or in-page navigation keeps it), else what an earlier
 * load of this tab kept. Null when the page was not launched by Telegram.
 */
export function readLaunch(win: Window = window): Launch | null {
  const webApp = win.Telegram?.WebApp;
  if (webApp?.initData) {
    return {
      initData: webApp.initData,
      themeParams: webApp.themeParams ?? {},
      platform: webApp.platform ?? 'unknown',
      version: webApp.version ?? '',
      webApp,
    };
  }
  const fromHash = launchFromHash(win.location.hash);
  if (fromHash) {
    try {
      win.sessionStorage.setItem(STORAGE_KEY, JSON.stringify(fromHash));
    } catch {
      /* storage off: this load still works */
    }
    win.history.replaceState(win.history.state, '', win.location.pathname + win.location.search);
    return { ...fromHash, webApp: null };
  }
  try {
    const kept = win.sessionStorage.getItem(STORAGE_KEY);
    if (kept) return { ...(JSON.parse(kept) as Omit<Launch, 'webApp'>), webApp: null };
  } catch {
    /* nothing kept */
  }
  return null;
}
