/**
 * Sent memory (docs/requirements.md §8.7): after a success the browser remembers it and shows the "sent" screen instead
 * of the form for 24 hours. A convenience, not a control. The server sets a cookie with the same meaning so the
 * screen also survives a reload without JavaScript. `storage` is null where the browser blocks site data.
 */
export const SENT_KEY = 'stickers:request-sent';
export const SENT_COOKIE = 'stickers_request_sent';
export const SENT_TTL_MS = 24 * 60 * 60 * 1000;

export function markRequestSent(storage: Pick<Storage, 'setItem'> | null, now = Date.now()): void {
  try {
    storage?.setItem(SENT_KEY, String(now));
  } catch {
    /* storage may be full or blocked: the cookie still works */
  }
}

export function requestSentRecently(storage: Pick<Storage, 'getItem'> | null, now = Date.now()): boolean {
  try {
    const at = Number(storage?.getItem(SENT_KEY));
    return Number.isFinite(at) && at > 0 && now - at < SENT_TTL_MS;
  } catch {
    return false;
  }
}

export function forgetRequestSent(storage: Pick<Storage, 'removeItem'> | null): void {
  try {
    storage?.removeItem(SENT_KEY);
  } catch {
    /* nothing to forget */
  }
}

/** The cookie value's time, if it is recent. */
export function sentCookieRecent(cookieHeader: string | null, now = Date.now()): boolean {
  const m = new RegExp(`(?:^|;\\s*)${SENT_COOKIE}=(\\d{1,15})`).exec(cookieHeader ?? '');
  return !!m && now - Number(m[1]) < SENT_TTL_MS && now >= Number(m[1]);
}

export function sentCookie(now = Date.now()): string {
  return `${SENT_COOKIE}=${now}; Path=/; Max-Age=${SENT_TTL_MS / 1000}; SameSite=Lax; HttpOnly`;
}

/** The browser's localStorage, or null where reading it throws (blocked storage). */
export function localStorageOrNull(): Storage | null {
  try {
    return window.localStorage;
  } catch {
    return null;
  }
}

/**
 * "Send another request": `/?again` with the page's own query (its UTM values) kept, so the next request is credited to
 * the same ad; Remix's `index` (in the address after a post) and an earlier `again` are left out.
 */
export function againHref(search: string): string {
  const query = new URLSearchParams(search);
  query.delete('index');
  query.delete('again');
  const rest = query.toString();
  return rest ? `/?again&${rest}` : '/?again';
}

export const clearSentCookie = `${SENT_COOKIE}=; Path=/; Max-Age=0; SameSite=Lax; HttpOnly`;
