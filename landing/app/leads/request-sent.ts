/**
 * Sent memory (docs/requirements.md §8.7): after a success the browser remembers it, with the lead's number and its
 * Telegram link when the answer had them, and shows the "sent" screen instead of the form for 24 hours. A convenience,
 * not a control. The server sets a cookie with the same meaning so the screen also survives a reload without
 * JavaScript (without the number and the link: the cookie holds the time alone). `storage` is null where the browser
 * blocks site data.
 */
export const SENT_KEY = 'stickers:request-sent';
export const SENT_COOKIE = 'stickers_request_sent';
export const SENT_TTL_MS = 24 * 60 * 60 * 1000;
/**
 * How long the memory offers the answer's Telegram link again. A link opens the bot for LEADS_TELEGRAM_LINK_DAYS from
 * the server's answer, a day at the least (0 gives no link at all); an hour less than that leaves room for the answer's
 * way back and a clock set meanwhile, so an expired link is never offered.
 */
export const SENT_LINK_TTL_MS = SENT_TTL_MS - 60 * 60 * 1000;

/** What the sent screen shows again from the memory: the lead's number and its Telegram link, when the answer had them. */
export interface RememberedSent {
  leadNumber?: number;
  telegramLink?: string;
}

/** A link the sent screen may show as it is: the action passes only the bot's start links, and nothing else is stored. */
const LINK = /^https?:\/\/[^\s"<>]{1,500}$/;

export function markRequestSent(storage: Pick<Storage, 'setItem'> | null, sent: RememberedSent = {}, now = Date.now()): void {
  try {
    storage?.setItem(SENT_KEY, JSON.stringify({ at: now, ...sent }));
  } catch {
    /* storage may be full or blocked: the cookie still works */
  }
}

/**
 * The remembered success, if it is recent (null otherwise): its number, and its link while it still opens the bot. A
 * value of an earlier version (the time alone) is a success without either.
 */
export function rememberedSent(storage: Pick<Storage, 'getItem'> | null, now = Date.now()): RememberedSent | null {
  try {
    const raw = storage?.getItem(SENT_KEY);
    if (!raw) return null;
    const value = (/^\d+$/.test(raw) ? { at: Number(raw) } : JSON.parse(raw)) as Record<string, unknown> | null;
    const at = value?.at;
    if (typeof at !== 'number' || !(at > 0) || now < at || now - at >= SENT_TTL_MS) return null;
    const { leadNumber, telegramLink } = value!;
    return {
      ...(typeof leadNumber === 'number' && Number.isSafeInteger(leadNumber) && leadNumber > 0 ? { leadNumber } : {}),
      ...(typeof telegramLink === 'string' && LINK.test(telegramLink) && now - at < SENT_LINK_TTL_MS ? { telegramLink } : {}),
    };
  } catch {
    return null;
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
