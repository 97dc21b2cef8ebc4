import { errorText } from '@stickers/shared';

/** How long a delivery may take before it counts as failed; tests shorten it through this provider. */
export interface WebhookTimeout {
  ms: number;
}
export const WEBHOOK_TIMEOUT = Symbol('WebhookTimeout');

/** A 2xx (success), or why not: another status (`answered`), a network error or no answer in time (not `answered`). */
export type WebhookAnswer = { ok: true; status: number } | { ok: false; answered: boolean; error: string };

const USER_AGENT = 'stickers-leads-webhooks/1';
/** docs/api.md, "Webhooks": Stripe's scheme. */
export const SIGNATURE_HEADER = 'Stickers-Signature';

/** The webhooks' one POST: redirects not followed (a 3xx fails), the body not read, cut off after `ms`. */
export async function postWebhook(url: string, body: string, headers: Record<string, string>, ms: number): Promise<WebhookAnswer> {
  const signal = AbortSignal.timeout(ms);
  try {
    const res = await fetch(url, {
      method: 'POST',
      body,
      headers: { 'Content-Type': 'application/json', 'User-Agent': USER_AGENT, ...headers },
      redirect: 'manual',
      signal,
    });
    await res.body?.cancel().catch(() => undefined);
    if (res.status >= 200 && res.status < 300) return { ok: true, status: res.status };
    return { ok: false, answered: true, error: `HTTP ${res.status}` };
  } catch (err) {
    if (signal.aborted) return { ok: false, answered: false, error: `no answer within ${ms / 1000} s` };
    return { ok: false, answered: false, error: `network error: ${networkErrorText(err, url)}` };
  }
}

/** Why a request failed, without the endpoint's URL (fetch quotes it, credentials included): its cause's code, else its message. */
export function networkErrorText(err: unknown, url: string): string {
  const cause = (err as { cause?: { code?: unknown; message?: unknown } } | null)?.cause;
  const code = cause?.code ?? (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && /^[A-Z][A-Z0-9_]{1,40}$/.test(code)) return code;
  const message = typeof cause?.message === 'string' ? cause.message : errorText(err);
  return withoutUrls(message, url);
}

/** `text` (at most 300 characters) with every URL, and every piece of `url` that could be a secret, replaced by `<url>`. */
export function withoutUrls(text: string, url?: string): string {
  let out = text.replace(/[A-Za-z][A-Za-z0-9+.-]*:\/\/\S*/g, '<url>');
  if (url !== undefined) {
    const u = URL.canParse(url) ? new URL(url) : null;
    const pieces = [url, u?.password, u?.username, u?.search, u?.pathname === '/' ? '' : u?.pathname];
    for (const piece of pieces) {
      if (!piece) continue;
      for (const form of new Set([piece, safeDecode(piece)])) out = out.split(form).join('<url>');
    }
  }
  return out.length > 300 ? `${out.slice(0, 299)}…` : out;
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** Scheme, host and port of an endpoint: what logs, the trace and alerts name (its path or query may hold a token). */
export function endpointOrigin(url: string): string {
  return new URL(url).origin;
}
