import type { ApiErrorCode, RateLimitReason } from './codes.js';
import type { FieldErrors } from './fields.js';
import type { CaptchaResult } from './captcha.js';
import type { ConsentBody } from './consent.js';
import type { OptionalLeadField } from './fields.js';

/** The header that carries the shared secret between landing and server. */
export const SECRET_HEADER = 'X-Stickers-Leads-Secret';
/** Integrators may send the standard idempotency header instead of `request_id` in the body. */
export const IDEMPOTENCY_HEADER = 'Idempotency-Key';

/**
 * The body of `POST /leads` as sent by the landing: the required fields, each optional field of the form
 * (`OPTIONAL_FIELD_RULES`) when given, the visitor's address, where the lead came from (checked by `checkSource`;
 * absent for a lead with no source), what came of the landing's captcha (absent without one) and the consent (checked by
 * `checkConsent`; absent without). Unknown fields are ignored by the server.
 */
export type LeadRequestBody = {
  request_id: string;
  name: string;
  /** The contacts: both, or the one the visitor gave when LEADS_REQUIRED_CONTACTS allows one. */
  telegram?: string;
  phone?: string;
  client_ip?: string;
  source?: LeadSourceBody;
  /** The landing's captcha: `passed`, or `unchecked` (its provider could not be reached); absent without a captcha. */
  captcha?: CaptchaResult;
  /** The visitor's consent, when the form's consent box (LANDING_PRIVACY_URL) was ticked. */
  consent?: ConsentBody;
} & { [K in OptionalLeadField]?: string };

/** The `source` object on the wire: every key optional, each a short text (`SOURCE_KEYS`). */
export interface LeadSourceBody {
  landing?: string;
  utm_source?: string;
  utm_medium?: string;
  utm_campaign?: string;
  utm_content?: string;
  utm_term?: string;
  /** The referrer's host only (`yandex.ru`). */
  referrer?: string;
}

/** The `late` object on the wire: times as ISO 8601 text (`2026-12-01T10:15:30.123Z`). Checked by `validateLate`. */
export interface LateDeliveryBody {
  /** When the landing first handled the visitor's request. */
  submitted_at: string;
  /** The landing's route then: `fallback` (the fallback message went to Telegram), `lost`, or another route word. */
  route: string;
  /** Why the server did not take it then: its status (`503`, `429 secret`), `timeout` or `network`. */
  reason: string;
  /** The fallback message, only when Telegram accepted it. */
  fallback?: { chat_id: string; message_id: number; sent_at: string };
}

/** A request the landing replays from its spool: the normal body, the same request_id, plus `late`. */
export interface ReplayedLeadRequestBody extends LeadRequestBody {
  late: LateDeliveryBody;
}

/** 201 (new lead) or 200 (known request_id, or a repeat). */
export interface LeadAcceptedBody {
  lead_number: number;
  duplicate: boolean;
  repeat: boolean;
  /** "Continue in Telegram": a link that opens the bot and binds the visitor's account to the lead; null: none. */
  telegram_link?: string | null;
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
