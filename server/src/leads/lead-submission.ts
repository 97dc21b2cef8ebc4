import type {
  ConsentInfo,
  FieldErrors,
  FieldOptions,
  LateInfo,
  LeadField,
  LeadFields,
  LeadSubmission,
  RateLimitReason,
  ReportedField,
  SourceField,
} from '@stickers/shared';
import type { FormColumns } from '../domain/lead';
import { checkConsent, CONSENT_FIELD, LATE_FIELD, LEAD_FIELDS, validateLate, validateSubmission } from '@stickers/shared';

/** What the submit decision came to; the controller maps each to a status of docs/requirements.md §1.2. */
export type SubmitOutcome =
  | { kind: 'invalid'; errors: FieldErrors<ReportedField | SourceField> }
  // `late`: replayed from the landing's spool; `telegramLink`: the lead's "Continue in Telegram" link (null: none).
  | { kind: 'created' | 'repeat'; leadNumber: number; late?: boolean; telegramLink?: string | null }
  // `fallbackNoted`: a replay told of a fallback message of this request, recorded now (the outbox has work).
  | { kind: 'duplicate'; leadNumber: number; repeat: boolean; fallbackNoted?: boolean; telegramLink?: string | null }
  // `late`: a replay over the replays' own allowance (LEADS_LATE_HOURLY_LIMIT), or over the per-visitor limit among replays.
  | { kind: 'limited'; why: Exclude<RateLimitReason, 'secret' | 'flood'>; retryAfterSec: number; late?: boolean }
  // The database could not take the decision (file gone, locked too long, disk full): nothing was stored.
  | { kind: 'unavailable' };

/** What the field rules of `POST /leads` depend on: the configuration's contacts, phone region and consent. */
export interface SubmissionRules extends FieldOptions {
  requireConsent: boolean;
}

export type CheckedSubmission =
  | { ok: true; lead: LeadSubmission; late: LateInfo | null; consent: ConsentInfo | null }
  | { ok: false; errors: FieldErrors<ReportedField | SourceField> };

/** `POST /leads`'s body by shared's rules: the submission, or every refused field in the order its 422 names them. */
export function checkSubmission(body: Record<string, unknown>, rules: SubmissionRules, now: number): CheckedSubmission {
  const checked = validateSubmission(body, { phoneRegion: rules.phoneRegion, requiredContacts: rules.requiredContacts });
  const late = validateLate(body[LATE_FIELD], now);
  // A replay's consent was stamped by the landing's clock when the visitor sent it: it may be as far ahead as `late`.
  const isLate = body[LATE_FIELD] !== undefined && body[LATE_FIELD] !== null;
  const consent = checkConsent(body[CONSENT_FIELD], now, { required: rules.requireConsent, late: isLate });
  if (checked.ok && late.ok && consent.ok) return { ok: true, lead: checked.value, late: late.value, consent: consent.value };
  return {
    ok: false,
    errors: {
      ...(checked.ok ? {} : checked.errors),
      ...(late.ok ? {} : { [LATE_FIELD]: 'invalid' }),
      ...(consent.ok ? {} : { [CONSENT_FIELD]: consent.code }),
    },
  };
}

/** A repeat keeps the fields that differ (§1.4): an empty one is no change, nor a username's letter case. */
export function changedFields(stored: FormColumns, incoming: LeadFields): Partial<Record<LeadField, string>> {
  const changes: Partial<Record<LeadField, string>> = {};
  for (const field of LEAD_FIELDS) {
    const next = incoming[field];
    if (next === null) continue;
    const before = stored[field];
    const same = field === 'telegram' ? before?.toLowerCase() === next.toLowerCase() : before === next;
    if (!same) changes[field] = next;
  }
  return changes;
}
