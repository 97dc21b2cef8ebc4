/**
 * The optional analytics goal of the sent screen (docs/requirements.md §8.6, docs/decisions.md "After sending: the
 * number and the goal"): Yandex.Metrica's `ym(<id>, 'reachGoal', <goal>)` and/or GA4's `gtag('event', <goal>)`, reached
 * once per delivered request. Runs in the browser; nothing here is secret.
 */

/** The counter(s) and the goal, as LANDING_METRIKA_ID, LANDING_GA4_ID and LANDING_GOAL give them (env.server.ts). */
export interface AnalyticsConfig {
  /** The Metrica counter's number, digits; null: no Metrica. */
  metrikaId: string | null;
  /** The GA4 measurement id, `G-…`; null: no GA4. */
  ga4Id: string | null;
  /** The goal's identifier: Metrica's goal id, GA4's event name. */
  goal: string;
}

export const METRIKA_SCRIPT = 'https://mc.yandex.ru/metrika/tag.js';
export const ga4Script = (id: string) => `https://www.googletagmanager.com/gtag/js?id=${encodeURIComponent(id)}`;

/**
 * The inline part of each configured counter: the function the page calls (a queue until the counter's script has
 * loaded, as the vendors' own snippets do) and the counter's start. No session recorder (Metrica's webvisor would
 * record what the visitor types into the form). The values were checked at start (digits, `G-…`), and are written as
 * JSON strings all the same.
 */
export function counterBootstrap(config: AnalyticsConfig): string {
  const parts: string[] = [];
  if (config.metrikaId) {
    parts.push(
      'window.ym=window.ym||function(){(window.ym.a=window.ym.a||[]).push(arguments)};window.ym.l=Date.now();' +
        `window.ym(${Number(config.metrikaId)},"init",{clickmap:false,trackLinks:true,accurateTrackBounce:true,webvisor:false});`,
    );
  }
  if (config.ga4Id) {
    parts.push(
      'window.dataLayer=window.dataLayer||[];window.gtag=window.gtag||function(){window.dataLayer.push(arguments)};' +
        `window.gtag("js",new Date());window.gtag("config",${JSON.stringify(config.ga4Id)});`,
    );
  }
  return parts.join('\n');
}

/** Where the goals already reached are remembered: the request ids, newest last. */
export const GOAL_KEY = 'stickers:goal-reached';
/** How many request ids are remembered (a visitor sends a handful at most; the oldest are dropped). */
const GOAL_MEMORY = 20;
/** When storage is blocked: at least this page's life does not reach the goal twice. */
const reachedInPage = new Set<string>();

type Counters = { ym?: unknown; gtag?: unknown };

/**
 * Reaches the goal for `requestId`, unless it was already reached for it (in this browser's storage, or in this page
 * when storage is blocked). True when it was reached now. The goal goes to each configured counter whose function the
 * page has (the inline bootstrap defines them, so they exist even while a counter's script is loading or blocked).
 */
export function reachGoalOnce(
  config: AnalyticsConfig,
  requestId: string,
  win: Counters,
  storage: Pick<Storage, 'getItem' | 'setItem'> | null,
): boolean {
  if (reachedInPage.has(requestId)) return false;
  const seen = readReached(storage);
  if (seen.includes(requestId)) return false;
  // Remembered before the calls: a counter that throws must not make the next render try again.
  reachedInPage.add(requestId);
  writeReached(storage, [...seen, requestId].slice(-GOAL_MEMORY));
  if (config.metrikaId && typeof win.ym === 'function') {
    (win.ym as (...args: unknown[]) => void)(Number(config.metrikaId), 'reachGoal', config.goal);
  }
  if (config.ga4Id && typeof win.gtag === 'function') {
    (win.gtag as (...args: unknown[]) => void)('event', config.goal);
  }
  return true;
}

function readReached(storage: Pick<Storage, 'getItem'> | null): string[] {
  try {
    const value: unknown = JSON.parse(storage?.getItem(GOAL_KEY) ?? '[]');
    return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
  } catch {
    return [];
  }
}

function writeReached(storage: Pick<Storage, 'setItem'> | null, ids: string[]): void {
  try {
    storage?.setItem(GOAL_KEY, JSON.stringify(ids));
  } catch {
    /* storage full or blocked: the page's own memory still holds it */
  }
}

/** Tests: forget what this page reached. */
export function forgetReachedInPage(): void {
  reachedInPage.clear();
}
