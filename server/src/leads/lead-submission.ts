import type { FieldErrors, LeadField, LeadFields, RateLimitReason, ReportedField, SourceField } from '@stickers/shared';
import { LEAD_FIELDS } from '@stickers/shared';

/** What the submit decision came to; the controller maps each to a status of docs/requirements.md §1.2. */
export type SubmitOutcome =
  | { kind: 'invalid'; errors: FieldErrors<ReportedField | SourceField> }
  /** `late`: replayed from the landing's spool. */
  | { kind: 'created'; leadNumber: number; late?: boolean }
  | { kind: 'repeat'; leadNumber: number; late?: boolean }
  /** `fallbackNoted`: a replay told of a fallback message of this request, recorded now (the outbox has work). */
  | { kind: 'duplicate'; leadNumber: number; repeat: boolean; fallbackNoted?: boolean }
  /** `late`: a replay over the replays' own allowance (LEADS_LATE_HOURLY_LIMIT), or over the per-visitor limit among replays. */
  | { kind: 'limited'; why: Exclude<RateLimitReason, 'secret' | 'flood'>; retryAfterSec: number; late?: boolean }
  /** The database could not take the decision (file gone, locked too long, disk full): nothing was stored. */
  | { kind: 'unavailable' };

export type LeadChanges = Partial<Record<LeadField, string>>;

type StoredFields = { [K in LeadField]: string | null };

/**
 * A repeat row keeps only the fields that differ from the lead as first stored (docs/requirements.md §1.4).
 * A field the repeat leaves empty is not a change (the visitor simply did not repeat it), and a username that
 * differs only in letter case is the same Telegram account.
 */
export function changedFields(stored: StoredFields, incoming: LeadFields): LeadChanges {
  const changes: LeadChanges = {};
  for (const field of LEAD_FIELDS) {
    const next = incoming[field];
    if (next === null) continue;
    const before = stored[field];
    const same = field === 'telegram' ? before?.toLowerCase() === next.toLowerCase() : before === next;
    if (!same) changes[field] = next;
  }
  return changes;
}
