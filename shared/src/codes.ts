/** Error codes on the wire (docs/requirements.md §1.2, §2.2). Both sides import these; never spell them inline. */

// The fields' names (LEAD_FIELDS, SERVER_FIELDS, SubmissionField) and FieldErrors are in fields.ts, with their rules.

/** The consent's field name: the `consent` object of the body, the form's checkbox, and in `errors` when refused. */
export const CONSENT_FIELD = 'consent';
export type ConsentField = typeof CONSENT_FIELD;

export const FIELD_ERROR_CODES = ['required', 'too_short', 'too_long', 'invalid'] as const;
export type FieldErrorCode = (typeof FIELD_ERROR_CODES)[number];

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

/**
 * Why a 429 was given (docs/requirements.md §1.2, §3; docs/api.md): `flood` is the per-caller throttle in front of a
 * route (too many requests from one caller in LEADS_THROTTLE_WINDOW_SEC), before anything else is read.
 */
export const RATE_LIMIT_REASONS = ['secret', 'visitor', 'hourly', 'flood'] as const;
export type RateLimitReason = (typeof RATE_LIMIT_REASONS)[number];
