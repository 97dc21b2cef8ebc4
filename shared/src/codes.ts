/** Error codes on the wire (docs/requirements.md §1.2, §2.2). Both sides import these; never spell them inline. */
import type { LeadField } from './fields.js';

// The form's fields (LEAD_FIELDS, LeadField) are listed with their rules, in fields.ts.

/**
 * Fields the server reads besides the visitor's own: the idempotency key, the visitor address and what came of the
 * landing's captcha.
 */
export const SERVER_FIELDS = ['request_id', 'client_ip', 'captcha'] as const;
export type ServerField = (typeof SERVER_FIELDS)[number];

export type SubmissionField = LeadField | ServerField;

/** The consent's field name: the `consent` object of the body, the form's checkbox, and in `errors` when refused. */
export const CONSENT_FIELD = 'consent';
export type ConsentField = typeof CONSENT_FIELD;

export const FIELD_ERROR_CODES = ['required', 'too_short', 'too_long', 'invalid'] as const;
export type FieldErrorCode = (typeof FIELD_ERROR_CODES)[number];

export type FieldErrors<F extends string = SubmissionField> = Partial<Record<F, FieldErrorCode>>;

export const API_ERRORS = {
  unauthorized: 'unauthorized',
  notFound: 'not_found',
  payloadTooLarge: 'payload_too_large',
  invalid: 'invalid',
  invalidBody: 'invalid_body',
  rateLimited: 'rate_limited',
  /** 503: the database cannot take the lead right now (file replaced, locked too long, disk full); nothing stored. */
  unavailable: 'unavailable',
} as const;
export type ApiErrorCode = (typeof API_ERRORS)[keyof typeof API_ERRORS];

/** Why a 429 was given (docs/requirements.md §1.2, §3). */
export const RATE_LIMIT_REASONS = ['secret', 'visitor', 'hourly'] as const;
export type RateLimitReason = (typeof RATE_LIMIT_REASONS)[number];
