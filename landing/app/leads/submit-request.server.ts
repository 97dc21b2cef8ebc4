import { isUuidV4, validateLeadFields, type FieldErrors, type LeadField, type LeadFields } from '@stickers/shared';
import { HONEYPOT_FIELD, readValues, type FormValues } from './form-fields';
import type { RateLimiter } from './rate-limit.server';
import { verifyStartedAt } from './started-at.server';

export type SubmitCheck =
  /** Tripped by a bot: the visitor is told "sent", nothing is sent. */
  | { kind: 'bot'; reason: 'honeypot' | 'too-fast'; requestId: string }
  | { kind: 'invalid'; errors: FieldErrors<LeadField>; requestId: string; values: FormValues }
  | { kind: 'throttled'; requestId: string; values: FormValues }
  | { kind: 'ok'; lead: LeadFields; requestId: string; values: FormValues };

export interface SubmitContext {
  ip: string;
  now: number;
  minFillMs: number;
  signingKey: Buffer;
  limiter: RateLimiter;
}

/**
 * Seed, `submitRequest.ts`, in its order: 1 honeypot, 2 minimum fill time, 3 schema, 4 per-IP limit.
 * A missing honeypot field counts as tripped (a real form always sends it, empty).
 */
export function submitRequest(form: FormData, ctx: SubmitContext): SubmitCheck {
  const rawId = form.get('requestId');
  const id = typeof rawId === 'string' ? rawId.trim().toLowerCase() : '';
  const requestId = isUuidV4(id) ? id : crypto.randomUUID();

  const honeypot = form.get(HONEYPOT_FIELD);
  if (honeypot === null || (typeof honeypot === 'string' && honeypot !== '')) return { kind: 'bot', reason: 'honeypot', requestId };

  const started = verifyStartedAt(form.get('startedAt'), ctx.signingKey);
  if (started === null || ctx.now - started < ctx.minFillMs) return { kind: 'bot', reason: 'too-fast', requestId };

  const values = readValues(form);
  const checked = validateLeadFields(values);
  if (!checked.ok) return { kind: 'invalid', errors: checked.errors, requestId, values };

  if (!ctx.limiter.take(ctx.ip, ctx.now)) return { kind: 'throttled', requestId, values };
  return { kind: 'ok', lead: checked.value, requestId, values };
}
