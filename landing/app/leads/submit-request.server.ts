import {
  CONSENT_FIELD,
  isUuidV4,
  validateLeadFields,
  type ConsentField,
  type FieldErrors,
  type LeadField,
  type LeadFields,
  type PhoneRegion,
  type RequiredContacts,
} from '@stickers/shared';
import { consentTicked, HONEYPOT_FIELD, readValues, type FormValues } from './form-fields';
import type { RateLimiter } from './rate-limit.server';
import { signStartedAt, verifyStartedAt } from './started-at.server';

export type SubmitCheck =
  /** Tripped by a bot: the visitor is told "sent", nothing is sent. */
  | { kind: 'bot'; reason: 'honeypot' | 'too-fast'; requestId: string }
  /**
   * A real page's token past its maximum age: nothing is sent, the visitor is asked to send again, with the values,
   * the same request id and a fresh token for it (`startedAt`).
   */
  | { kind: 'expired'; requestId: string; values: FormValues; startedAt: string }
  | { kind: 'invalid'; errors: FieldErrors<LeadField | ConsentField>; requestId: string; values: FormValues; startedAt: string }
  | { kind: 'throttled'; requestId: string; values: FormValues; startedAt: string }
  /** `consented`: the consent box was ticked (always false without LANDING_PRIVACY_URL: there is no box). */
  | { kind: 'ok'; lead: LeadFields; consented: boolean; requestId: string; values: FormValues; startedAt: string };

export interface SubmitContext {
  /** The limiter's key: the visitor's address as derived from the socket and trusted proxies. */
  ip: string;
  now: number;
  minFillMs: number;
  signingKey: Buffer;
  limiter: RateLimiter;
  /** LEADS_PHONE_REGION: where a phone typed without `+` is read (RU when absent). */
  phoneRegion?: PhoneRegion;
  /** LEADS_REQUIRED_CONTACTS: which contacts the form must have (both when absent). */
  requiredContacts?: RequiredContacts;
  /** LANDING_PRIVACY_URL: with it the consent box is required (an unticked box is the field error `consent`). */
  privacyUrl?: string | null;
}

/**
 * The checks, in this order: 1 honeypot, 2 minimum fill time, 3 schema (and the consent box with LANDING_PRIVACY_URL),
 * 4 per-IP limit.
 * A missing honeypot field counts as tripped (a real form always sends it, empty). A `startedAt` signed for another
 * request id, forged or missing fails the fill-time check like a fast bot. One that we signed but that is past its
 * maximum age is a real visitor's page: `expired`, nothing delivered, asked to send again (a token from a page
 * rendered before the token carried its request id counts as signed, see `verifyStartedAt`). Past the checks,
 * `startedAt` is the verified token, handed back so a retry of the same request id carries it.
 * The request id: the one the token was signed for; else (a token from before that) the form's `requestId` when it is
 * a UUID v4; else a new one. So a post whose `requestId` is missing or malformed but whose token is valid is the
 * request the token names, and a token reused only repeats that one, idempotent request.
 */
export function submitRequest(form: FormData, ctx: SubmitContext): SubmitCheck {
  const rawId = form.get('requestId');
  const id = typeof rawId === 'string' ? rawId.trim().toLowerCase() : '';
  const formRequestId = isUuidV4(id) ? id : null;
  const token = form.get('startedAt');
  const started = verifyStartedAt(token, formRequestId, ctx.signingKey, ctx.now);
  const signedFor = started.ok || started.reason === 'expired' ? started.requestId : null;
  const requestId = signedFor ?? formRequestId ?? crypto.randomUUID();

  const honeypot = form.get(HONEYPOT_FIELD);
  if (honeypot === null || (typeof honeypot === 'string' && honeypot !== '')) return { kind: 'bot', reason: 'honeypot', requestId };

  if (!started.ok && started.reason === 'expired') {
    // Signed as if the form had been opened `minFillMs` ago: the visitor already spent their fill time on this form,
    // so the immediate resubmit must not be taken for a fast bot.
    const fresh = signStartedAt(ctx.now - ctx.minFillMs, requestId, ctx.signingKey);
    return { kind: 'expired', requestId, values: readValues(form), startedAt: fresh };
  }
  if (!started.ok || ctx.now - started.startedAt < ctx.minFillMs) return { kind: 'bot', reason: 'too-fast', requestId };
  const startedAt = token as string;

  const values = readValues(form);
  const checked = validateLeadFields(values, { phoneRegion: ctx.phoneRegion, requiredContacts: ctx.requiredContacts });
  const consented = !!ctx.privacyUrl && consentTicked(form);
  const consentMissing = !!ctx.privacyUrl && !consented;
  if (!checked.ok || consentMissing) {
    const errors: FieldErrors<LeadField | ConsentField> = {
      ...(checked.ok ? {} : checked.errors),
      ...(consentMissing ? { [CONSENT_FIELD]: 'required' as const } : {}),
    };
    return { kind: 'invalid', errors, requestId, values, startedAt };
  }

  if (!ctx.limiter.take(ctx.ip, ctx.now)) return { kind: 'throttled', requestId, values, startedAt };
  return { kind: 'ok', lead: checked.value, consented, requestId, values, startedAt };
}
