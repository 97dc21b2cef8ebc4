import type { ApiErrorCode, FieldErrors, RateLimitReason } from './codes.js';

/** The header that carries the shared secret between landing and server. */
export const SECRET_HEADER = 'X-Stickers-Leads-Secret';
/** Integrators may send the standard idempotency header instead of `request_id` in the body. */
export const IDEMPOTENCY_HEADER = 'Idempotency-Key';

/** The body of `POST /leads` as sent by the landing. Unknown fields are ignored by the server. */
export interface LeadRequestBody {
  request_id: string;
  name: string;
  telegram: string;
  phone: string;
  date?: string;
  guests?: string;
  comment?: string;
  client_ip?: string;
}

/** 201 (new lead) or 200 (known request_id, or a repeat). */
export interface LeadAcceptedBody {
  lead_number: number;
  duplicate: boolean;
  repeat: boolean;
}

export interface ErrorBody {
  error: Exclude<ApiErrorCode, 'invalid' | 'rate_limited'>;
}
export interface InvalidBody {
  error: 'invalid';
  errors: FieldErrors;
}
export interface RateLimitedBody {
  error: 'rate_limited';
  why: RateLimitReason;
}
export type LeadErrorBody = ErrorBody | InvalidBody | RateLimitedBody;
