import type { CaptchaResult } from '@stickers/shared';
import { captchaToken, verifyCaptcha } from '../captcha/verify.server';
import { getEnv } from '../env.server';
import { deliverRequest, ROUTE_STATE, type DeliveryResult } from './deliver-request.server';
import type { FormValues } from './form-fields';
import { UNKNOWN_VISITOR, visitorIp, visitorLimiter } from './rate-limit.server';
import { formPageSource, formSource, type PageSource } from './source.server';
import { spooledFallback, spoolDelivery } from './spool.server';
import { signStartedAt } from './started-at.server';
import { submitRequest } from './submit-request.server';
import type { ConsentBody, ConsentField, FieldErrors, LeadField, PhoneRegion, RequiredContacts } from '@stickers/shared';

/** The deliveries under way in this process, by request id. */
const inFlight = new Map<string, Promise<DeliveryResult>>();

/**
 * `expired`: the page's form token was past its maximum age; nothing sent, the visitor is asked to send again.
 * `captcha`: no captcha token, or the provider refused it; nothing sent, the visitor is asked to pass the check again.
 */
export type FormState = 'sent' | 'throttled' | 'error' | 'invalid' | 'expired' | 'captcha';

export interface ActionResult {
  state: FormState;
  requestId: string;
  /** The form token for `requestId`, so a retry of the same request passes the checks again. */
  startedAt?: string;
  values?: FormValues;
  errors?: FieldErrors<LeadField | ConsentField>;
  /** The form's hidden source inputs, for a form shown again; absent when it had none. */
  source?: PageSource;
  /**
   * `sent` by the server: the lead's number it answered (the same for a duplicate of the request). Absent when the
   * request went through the fallback or the spool, or was a bot's quietly dropped one: no number, none invented.
   */
  leadNumber?: number;
  /**
   * `sent` by the server: its "Continue in Telegram" link to the lead, offered on the sent screen. Absent on the
   * fallback and the spool's routes, and when the server answered none.
   */
  telegramLink?: string;
  /**
   * `sent` and delivered (the server or the fallback took it), with an analytics goal configured: the sent screen
   * reaches the goal, once for this request id. Never on a field error, a refusal, or a bot's quiet "sent".
   */
  goal?: true;
}

/**
 * What the page needs to render a fresh form: a new request id and a start time signed for it, the phone region the
 * browser's checks read a number in (the action's own, LEADS_PHONE_REGION), which contacts are required
 * (LEADS_REQUIRED_CONTACTS) and the privacy policy the consent box links to (LANDING_PRIVACY_URL; null: no box).
 */
export function freshForm(now = Date.now()): {
  requestId: string;
  startedAt: string;
  phoneRegion: PhoneRegion;
  requiredContacts: RequiredContacts;
  privacyUrl: string | null;
} {
  const requestId = crypto.randomUUID();
  const env = getEnv();
  return {
    requestId,
    startedAt: signStartedAt(now, requestId, env.signingKey),
    phoneRegion: env.phoneRegion,
    requiredContacts: env.requiredContacts,
    privacyUrl: env.privacyUrl,
  };
}

/** The `consent` of the body: the time the action took the ticked form (the visitor's "now"), and the policy linked. */
export function consentOf(privacyUrl: string, now: number): ConsentBody {
  return { accepted_at: new Date(now).toISOString(), policy_url: privacyUrl };
}

/**
 * The form's server action: checks (submitRequest), delivery (deliverRequest), the spool for a request that did not
 * reach the server's database (spoolDelivery), one log line per request with the route and no personal data.
 * Everything but "sent" hands back the typed values, the same request id and its token (for `expired`, a fresh token
 * for that request id).
 * Only a delivered request keeps its slot in the visitor's limit.
 */
export async function handleLeadForm(request: Request, socketAddress: string | undefined, now = Date.now()): Promise<ActionResult> {
  const env = getEnv();
  const form = await request.formData();
  const ip = visitorIp(request.headers, socketAddress, env.trustProxy);
  const limiterKey = ip ?? UNKNOWN_VISITOR;
  const page = formPageSource(form);
  const again = Object.keys(page).length > 0 ? { source: page } : {};
  const check = submitRequest(form, {
    ip: limiterKey,
    now,
    minFillMs: env.minFillMs,
    signingKey: env.signingKey,
    limiter: visitorLimiter,
    phoneRegion: env.phoneRegion,
    requiredContacts: env.requiredContacts,
    privacyUrl: env.privacyUrl,
  });
  switch (check.kind) {
    case 'bot':
      // Not a delivery route: a bot gets a quiet "sent" and nothing is sent anywhere.
      console.log(`[request] ${check.requestId} → dropped (${check.reason})`);
      return { state: 'sent', requestId: check.requestId };
    case 'expired':
      // A real visitor's old page, not a bot: nothing is delivered now; the fresh token lets them send it again.
      console.log(`[request] ${check.requestId} → expired (asked to resend)`);
      return { state: 'expired', requestId: check.requestId, startedAt: check.startedAt, values: check.values, ...again };
    case 'invalid':
      console.log(`[request] ${check.requestId} → invalid (${Object.keys(check.errors).join(', ')})`);
      return {
        state: 'invalid',
        requestId: check.requestId,
        startedAt: check.startedAt,
        values: check.values,
        errors: check.errors,
        ...again,
      };
    case 'throttled':
      console.log(`[request] ${check.requestId} → throttled`);
      return { state: 'throttled', requestId: check.requestId, startedAt: check.startedAt, values: check.values, ...again };
    case 'ok': {
      // The captcha last, once everything else passed: a refused token sends nothing and gives the slot back.
      let captcha: CaptchaResult | null = null;
      if (env.captcha) {
        const verified = await verifyCaptcha(env.captcha, captchaToken(form, env.captcha.provider), ip);
        if (verified.kind === 'rejected') {
          console.log(`[request] ${check.requestId} → captcha (${verified.detail})`);
          visitorLimiter.release(limiterKey, now);
          return { state: 'captcha', requestId: check.requestId, startedAt: check.startedAt, values: check.values, ...again };
        }
        // The provider could not be reached: delivered anyway, marked for the managers.
        if (verified.kind === 'unchecked') console.log(`[request] ${check.requestId} captcha unchecked (${verified.detail})`);
        captcha = verified.kind;
      }
      const source = formSource(form, env.landingSource);
      // One delivery per request at a time: the same form posted twice at once (a double submit) shares the first's.
      let delivering = inFlight.get(check.requestId);
      if (!delivering) {
        delivering = (async () => {
          const result = await deliverRequest(
            {
              requestId: check.requestId,
              lead: check.lead,
              clientIp: ip,
              ...(source ? { source } : {}),
              ...(captcha ? { captcha } : {}),
              ...(check.consented && env.privacyUrl ? { consent: consentOf(env.privacyUrl, now) } : {}),
              // Sent again after a fallback (a reload of the "sent" page): the group has its message already.
              sentFallback: await spooledFallback(env, check.requestId),
            },
            env,
          );
          // On disk before the visitor gets the answer: a request the server's database did not get is replayed later.
          await spoolDelivery(env, check.requestId, result, now);
          return result;
        })().finally(() => inFlight.delete(check.requestId));
        inFlight.set(check.requestId, delivering);
      }
      const result = await delivering;
      const why =
        result.route === 'server-rejected' || result.route === 'lost' || result.route === 'fallback'
          ? ` (${result.status ?? '-'} ${(result.detail ?? '').replace(/\s+/g, ' ').slice(0, 200)})`
          : '';
      console.log(`[request] ${check.requestId} → ${result.route}${why}`);
      const state = ROUTE_STATE[result.route];
      if (state === 'sent') {
        return {
          state,
          requestId: check.requestId,
          ...(result.leadNumber !== undefined ? { leadNumber: result.leadNumber } : {}),
          ...(result.telegramLink !== undefined ? { telegramLink: result.telegramLink } : {}),
          ...(env.analytics ? { goal: true as const } : {}),
        };
      }
      visitorLimiter.release(limiterKey, now);
      return { state, requestId: check.requestId, startedAt: check.startedAt, values: check.values, ...again };
    }
  }
}
