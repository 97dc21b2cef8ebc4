import {
  OPTIONAL_LEAD_FIELDS,
  type ConsentBody,
  SECRET_HEADER,
  type CaptchaResult,
  type LeadAcceptedBody,
  type LeadFields,
  type LeadRequestBody,
  type LeadSource,
  type RateLimitedBody,
  errorText,
} from '@stickers/shared';
import type { LandingEnv } from '../env.server';
import { requestMessage, type TelegramText } from './request-message.server';

/** Where a request went (docs/requirements.md §8.3). */
export type DeliveryRoute = 'server' | 'server-throttled' | 'server-rejected' | 'fallback' | 'lost' | 'direct' | 'console';
/** What the visitor sees for each route. */
export type VisitorState = 'sent' | 'throttled' | 'error';

export const ROUTE_STATE: Record<DeliveryRoute, VisitorState> = {
  server: 'sent',
  'server-throttled': 'throttled',
  'server-rejected': 'error',
  fallback: 'sent',
  lost: 'error',
  direct: 'sent',
  console: 'sent',
};

export const SERVER_TIMEOUT_MS = 5000;
export const TELEGRAM_TIMEOUT_MS = 10_000;

export interface Delivery {
  requestId: string;
  lead: LeadFields;
  /** The visitor's canonical address; null when none could be derived (the server then sees none). */
  clientIp: string | null;
  /** Where the visitor came from: LANDING_SOURCE, the page's UTM values, the referrer's host; or none. */
  source?: LeadSource;
  /** What came of the captcha (`passed`, or `unchecked`: its provider could not be reached); absent without one. */
  captcha?: CaptchaResult;
  /** The visitor's consent (the box was ticked, with LANDING_PRIVACY_URL); none without. */
  consent?: ConsentBody;
  /** This request's fallback message, already in the group (the spool has it): a failure sends no second one. */
  sentFallback?: FallbackMessage;
}

/** The fallback message Telegram accepted: where it is and when it was sent (the spool hands it to the server). */
export interface FallbackMessage {
  chatId: string;
  messageId: number;
  /** ISO 8601 UTC, ms. */
  sentAt: string;
}

export interface DeliveryResult {
  route: DeliveryRoute;
  /** The server's status, when it answered. */
  status?: number;
  detail?: string;
  /**
   * Why the server did not take it, in short, when it did not: the status (`"503"`, `"429 secret"`), `"timeout"` or
   * `"network"`.
   */
  reason?: string;
  /** The fallback message, when Telegram accepted it (route `fallback`). */
  fallback?: FallbackMessage;
  /** The body sent to the server (route server*, fallback, lost with a server configured): what the spool replays. */
  body?: LeadRequestBody;
  /**
   * The lead's number from the server's 201/200 (route `server`; a duplicate or a repeat names the lead it belongs
   * to). Absent on every other route, and when the answer did not carry a positive whole number.
   */
  leadNumber?: number;
  /** The answer's "Continue in Telegram" link (route `server`), when it carries one of the bot's t.me links. */
  telegramLink?: string;
}

/** A bot's username and a start parameter after the root: nothing else is ever put on the page as the Telegram link. */
const BOT_START = /^\/[A-Za-z][A-Za-z0-9_]{4,31}\?start=[A-Za-z0-9_-]{1,64}$/;

/**
 * `telegram_link` of an accepted lead's answer, when it is a link under `root` (LEADS_TELEGRAM_LINK_ROOT, t.me) that
 * opens a bot with a start parameter; otherwise none.
 */
export function acceptedTelegramLink(body: string, root = 'https://t.me'): string | undefined {
  try {
    const link = (JSON.parse(body) as Partial<LeadAcceptedBody> | null)?.telegram_link;
    return typeof link === 'string' && link.startsWith(root) && BOT_START.test(link.slice(root.length)) ? link : undefined;
  } catch {
    return undefined;
  }
}

/** `lead_number` of an accepted lead's answer, when it is a positive whole number; otherwise none. */
export function acceptedLeadNumber(body: string): number | undefined {
  try {
    const n = (JSON.parse(body) as Partial<LeadAcceptedBody> | null)?.lead_number;
    return typeof n === 'number' && Number.isSafeInteger(n) && n > 0 ? n : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A 429 for the landing itself rather than for the visitor: too many wrong secrets from its address (`secret`), or
 * more requests from the landing's address than the server's flood guard takes (`flood`; every visitor shares it).
 * The reason it is logged and spooled under (`429 secret`, `429 flood`), or null for the visitor's own limits.
 */
function landingRefused(body: string): string | null {
  try {
    const why = (JSON.parse(body) as Partial<RateLimitedBody>)?.why;
    return why === 'secret' || why === 'flood' ? `429 ${why}` : null;
  } catch {
    return null;
  }
}

export interface TelegramSent {
  ok: boolean;
  detail: string;
  /** Where Telegram put the message, when it accepted it. */
  message?: FallbackMessage;
}

/** Telegram's answers for a forum topic that is closed or deleted. */
const TOPIC_GONE = /message thread not found|TOPIC_CLOSED|TOPIC_DELETED/i;

/**
 * One `sendMessage` of plain text (with its entities) to `chatId` through the landing's bot: the fallback and direct
 * messages go to the leads group (in its LEADS_THREAD_ID topic: `threadId`), the spool's alerts to the admin chat.
 * A topic Telegram refuses (closed, deleted) never costs the request: the message goes into the chat's General topic.
 */
export async function sendTelegramMessage(
  telegram: NonNullable<LandingEnv['telegram']>,
  chatId: string,
  message: TelegramText,
  threadId: number | null = null,
): Promise<TelegramSent> {
  const sent = await sendOnce(telegram, chatId, message, threadId);
  if (sent.ok || threadId === null || !sent.topicGone) return sent;
  const again = await sendOnce(telegram, chatId, message, null);
  return { ...again, detail: `${again.detail} (topic ${threadId} refused: ${sent.detail}; in the chat's General topic)` };
}

async function sendOnce(
  telegram: NonNullable<LandingEnv['telegram']>,
  chatId: string,
  message: TelegramText,
  threadId: number | null,
): Promise<TelegramSent & { topicGone?: boolean }> {
  try {
    const res = await fetch(`${telegram.apiRoot}/bot${telegram.token}/sendMessage`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        chat_id: chatId,
        ...(threadId !== null ? { message_thread_id: threadId } : {}),
        text: message.text,
        ...(message.entities.length ? { entities: message.entities } : {}),
        link_preview_options: { is_disabled: true },
      }),
      signal: AbortSignal.timeout(TELEGRAM_TIMEOUT_MS),
    });
    const body = (await res.json().catch(() => ({}))) as {
      ok?: boolean;
      description?: string;
      result?: { message_id?: unknown; chat?: { id?: unknown } };
    };
    if (!res.ok || !body.ok) {
      const description = body.description ?? '';
      return { ok: false, detail: `telegram ${res.status}: ${description}`, topicGone: res.status === 400 && TOPIC_GONE.test(description) };
    }
    const messageId = body.result?.message_id;
    const chat = body.result?.chat?.id;
    const where =
      typeof messageId === 'number' && (typeof chat === 'number' || typeof chat === 'string')
        ? { chatId: String(chat), messageId, sentAt: new Date().toISOString() }
        : undefined;
    return { ok: true, detail: 'telegram accepted', ...(where ? { message: where } : {}) };
  } catch (err) {
    return { ok: false, detail: `telegram unreachable: ${err instanceof Error ? err.name : String(err)}` };
  }
}

/** One `sendMessage` straight to the leads group (no buttons, no number: an admin handles it by hand). */
function sendToTelegram(telegram: NonNullable<LandingEnv['telegram']>, message: TelegramText): Promise<TelegramSent> {
  return sendTelegramMessage(telegram, telegram.chatId, message, telegram.threadId ?? null);
}

/**
 * The body of `POST /leads` for a delivery: the normalised fields (a contact the visitor left out is left out), the
 * visitor's address when there is one, the source, the captcha's result and the consent when there are.
 */
export function leadRequestBody(delivery: Delivery): LeadRequestBody {
  const { requestId, lead } = delivery;
  return {
    request_id: requestId,
    name: lead.name,
    ...(lead.telegram ? { telegram: lead.telegram } : {}),
    ...(lead.phone ? { phone: lead.phone } : {}),
    ...Object.fromEntries(OPTIONAL_LEAD_FIELDS.flatMap((f) => (lead[f] ? [[f, lead[f]]] : []))),
    ...(delivery.clientIp ? { client_ip: delivery.clientIp } : {}),
    ...(delivery.source ? { source: delivery.source } : {}),
    ...(delivery.captcha ? { captcha: delivery.captcha } : {}),
    ...(delivery.consent ? { consent: delivery.consent } : {}),
  };
}

/**
 * The status mapping of docs/requirements.md §8.3: POST to the server with the secret and a 5 s timeout; 201/200
 * sent; 429 and 422 never fall back; 401, 404, 413, 5xx, any other status, a timeout or a network error fall back
 * to a direct Telegram message with the warning line. A 429 whose `why` is `secret` or `flood` is the exception: the
 * server has refused the landing itself (wrong secrets from its address, or its flood guard over every visitor
 * together), which is a server-side failure like a 401, not a visitor sending too much. Without a server configured: straight to Telegram (no warning line), or, in
 * development only, to the console when Telegram is not configured either.
 */
export async function deliverRequest(delivery: Delivery, env: LandingEnv): Promise<DeliveryResult> {
  const { requestId, lead } = delivery;
  const captcha = delivery.captcha;
  if (!env.leadsEndpoint || !env.leadsSecret) {
    if (!env.telegram) {
      // The console route exists for local runs: the request is printed. In production the configuration check
      // refuses to start like this, and should this ever run there, the request is lost, not printed.
      if (env.production) return { route: 'lost', detail: 'no server or Telegram configured' };
      console.log(
        `[request] ${requestId} (not sent anywhere: no server or Telegram configured)\n${requestMessage(lead, requestId, { fallback: false, locale: env.locale, captcha, consent: delivery.consent }).text}`,
      );
      return { route: 'console' };
    }
    const sent = await sendToTelegram(
      env.telegram,
      requestMessage(lead, requestId, { fallback: false, locale: env.locale, captcha, consent: delivery.consent }),
    );
    return { route: sent.ok ? 'direct' : 'lost', detail: sent.detail };
  }

  const body = leadRequestBody(delivery);
  let status: number | undefined;
  let detail: string;
  let reason: string;
  try {
    const res = await fetch(env.leadsEndpoint, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', [SECRET_HEADER]: env.leadsSecret },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(SERVER_TIMEOUT_MS),
    });
    status = res.status;
    detail = (await res.text().catch(() => '')).slice(0, 300);
    if (status === 201 || status === 200) {
      const leadNumber = acceptedLeadNumber(detail);
      const telegramLink = acceptedTelegramLink(detail, env.telegramLinkRoot);
      return {
        route: 'server',
        status,
        body,
        ...(leadNumber !== undefined ? { leadNumber } : {}),
        ...(telegramLink !== undefined ? { telegramLink } : {}),
      };
    }
    const refused = status === 429 ? landingRefused(detail) : null;
    if (status === 429 && refused === null) return { route: 'server-throttled', status, body };
    if (status === 422) return { route: 'server-rejected', status, detail, body };
    reason = refused ?? String(status);
  } catch (err) {
    const timedOut = err instanceof Error && err.name === 'TimeoutError';
    reason = timedOut ? 'timeout' : 'network';
    detail = timedOut ? 'server timeout (5 s)' : `server unreachable: ${errorText(err)}`;
  }

  if (delivery.sentFallback)
    return {
      route: 'fallback',
      status,
      reason,
      body,
      detail: `${detail}; its fallback message is in the group`,
      fallback: delivery.sentFallback,
    };
  if (!env.telegram) return { route: 'lost', status, reason, body, detail: `${detail}; no Telegram fallback configured` };
  const sent = await sendToTelegram(
    env.telegram,
    requestMessage(lead, requestId, { fallback: true, locale: env.locale, captcha, consent: delivery.consent, reason }),
  );
  return {
    route: sent.ok ? 'fallback' : 'lost',
    status,
    reason,
    body,
    detail: `${detail}; ${sent.detail}`,
    ...(sent.ok && sent.message ? { fallback: sent.message } : {}),
  };
}
