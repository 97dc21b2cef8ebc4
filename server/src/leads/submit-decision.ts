import { changedFields } from './lead-submission';
import type { SubmitPlan, SubmitQueries, SubmitVerdict } from '../repositories/submit-runner';

/**
 * The submit decision (docs/requirements.md §1.1, step 10), from the plan LeadsService made, over the queries of one
 * transaction that no other decision runs beside, so that races cannot pass the limits. SQLite runs it over its
 * prepared statements (SqliteSubmitRunner, group commit); PostgreSQL runs the same checks, in the same order, as its
 * function `leads_decide` (migration 0023): a change here is a change there, and test/submit-decision.test.ts runs the
 * same cases on both databases to hold them together.
 *
 * A late request (replayed from the landing's spool) keeps the visitor's time as its creation time and is matched for
 * repeats around that time (a lead within 24 h of it, before or after). It is checked and counted at its arrival, as
 * every request is, but in a count of its own (`plan.count`, `late`): the same per-visitor limit among replays and an
 * hourly allowance of its own, so that a burst of replays after an outage neither locks out the visitors who come
 * after it nor lets anyone holding the secret pass the limits by calling a request late.
 */
export function decideSubmit(q: SubmitQueries, plan: SubmitPlan): SubmitVerdict {
  // Known request_id first: a landing retry is never throttled.
  const known = q.findRequest(plan.request_id);
  if (known) {
    const noted = plan.fallback !== null && !known.hasFallback && q.reportFallback(known, plan.fallback);
    if (noted) {
      const what = known.repeat ? `a repeat of #${known.leadId}` : `lead #${known.leadId}`;
      q.recordEvent({
        leadId: known.leadId,
        repeatId: known.repeat ? known.rowId : null,
        kind: 'received_late',
        at: plan.now,
        detail: `${plan.late_story} as ${what}, stored before; the fallback message is recorded`,
      });
    }
    return { kind: 'duplicate', lead_number: known.leadId, repeat: known.repeat, fallback_noted: noted };
  }

  const { limits, count } = plan;
  const visitorNth = q.nthAccepted(count, plan.ip_hash, limits.visitor_since, limits.visitor_limit);
  if (visitorNth !== null) return { kind: 'limited', why: 'visitor', nth: visitorNth };
  const hourlyNth = q.nthAccepted(count, null, limits.hourly_since, limits.hourly_limit);
  if (hourlyNth !== null) return { kind: 'limited', why: 'hourly', nth: hourlyNth };

  // Counted at its arrival, in its own count (a late request's time on the landing may lie in windows long gone).
  q.recordAccepted(count, plan.ip_hash, plan.now);
  // A replay sent before its contact was erased is stored without its personal data (and repeats nothing: the
  // erased leads are anonymised).
  if (plan.erased && q.erasedSince(plan.erased.hashes, plan.created_at)) {
    const id = q.insertLead(plan.erased.lead);
    q.recordEvent({
      leadId: id,
      repeatId: null,
      kind: 'received_late',
      at: plan.now,
      detail: `${plan.late_story} as lead #${id}, anonymised: its contact was erased after it was submitted`,
    });
    return { kind: 'created', lead_number: id };
  }
  const { match } = plan;
  const target = q.findRepeatTarget(match.telegram_key, match.phone, match.since, match.until);
  if (target) {
    const repeatId = q.insertRepeat({ ...plan.repeat, lead_id: target.id, changes: JSON.stringify(changedFields(target, plan.incoming)) });
    if (plan.late_story !== null)
      q.recordEvent({
        leadId: target.id,
        repeatId,
        kind: 'received_late',
        at: plan.now,
        detail: `${plan.late_story} as a repeat of #${target.id}`,
      });
    return { kind: 'repeat', lead_number: target.id };
  }
  const id = q.insertLead(plan.lead);
  if (plan.late_story !== null)
    q.recordEvent({ leadId: id, repeatId: null, kind: 'received_late', at: plan.now, detail: `${plan.late_story} as lead #${id}` });
  return { kind: 'created', lead_number: id };
}
