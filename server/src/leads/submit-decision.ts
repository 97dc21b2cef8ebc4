import { LEAD_FIELDS, type LeadField, type LeadFields } from '@stickers/shared';
import type { FormColumns } from '../domain/lead';
import type { SubmitPlan, SubmitQueries, SubmitVerdict } from '../repositories/submit-runner';

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

/**
 * The submit decision (§1.1 step 10), in one transaction no other decision runs beside. PostgreSQL's `leads_decide`
 * (migration 0023) runs the same checks in the same order: test/submit-decision.test.ts holds the two together.
 */
export function decideSubmit(q: SubmitQueries, plan: SubmitPlan): SubmitVerdict {
  /** A late request's event (a reported fallback or an erased contact comes with one only): its story, then what it was stored as. */
  const receivedLate = (leadId: number, repeatId: number | null, storedAs: string) => {
    if (plan.late_story !== null)
      q.recordEvent({ leadId, repeatId, kind: 'received_late', at: plan.now, detail: `${plan.late_story} as ${storedAs}` });
  };
  // Known request_id first: a landing retry is never throttled.
  const known = q.findRequest(plan.request_id);
  if (known) {
    const noted = plan.fallback !== null && !known.hasFallback && q.reportFallback(known, plan.fallback);
    if (noted) {
      const what = known.repeat ? `a repeat of #${known.leadId}` : `lead #${known.leadId}`;
      receivedLate(known.leadId, known.repeat ? known.rowId : null, `${what}, stored before; the fallback message is recorded`);
    }
    return { kind: 'duplicate', lead_number: known.leadId, repeat: known.repeat, fallback_noted: noted };
  }

  const { limits, count } = plan;
  const visitorNth = q.nthAccepted(count, plan.ip_hash, limits.visitor_since, limits.visitor_limit);
  if (visitorNth !== null) return { kind: 'limited', why: 'visitor', nth: visitorNth };
  const hourlyNth = q.nthAccepted(count, null, limits.hourly_since, limits.hourly_limit);
  if (hourlyNth !== null) return { kind: 'limited', why: 'hourly', nth: hourlyNth };

  // Counted at its arrival, a late request in its own count: replays after an outage neither lock out visitors nor pass the limits.
  q.recordAccepted(count, plan.ip_hash, plan.now);
  // A replay sent before its contact was erased is stored anonymised (and repeats nothing).
  if (plan.erased && q.erasedSince(plan.erased.hashes, plan.created_at)) {
    const id = q.insertLead(plan.erased.lead);
    receivedLate(id, null, `lead #${id}, anonymised: its contact was erased after it was submitted`);
    return { kind: 'created', lead_number: id };
  }
  const { match } = plan;
  const target = q.findRepeatTarget(match.telegram_key, match.phone, match.since, match.until);
  if (target) {
    const repeatId = q.insertRepeat({ ...plan.repeat, lead_id: target.id, changes: JSON.stringify(changedFields(target, plan.incoming)) });
    receivedLate(target.id, repeatId, `a repeat of #${target.id}`);
    return { kind: 'repeat', lead_number: target.id };
  }
  const id = q.insertLead(plan.lead);
  receivedLate(id, null, `lead #${id}`);
  return { kind: 'created', lead_number: id };
}
