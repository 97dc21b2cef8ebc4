import type { LeadField, LeadFields } from '@stickers/shared';
import type { DatabaseHandle } from '../database/database.module';
import type { LeadEventKind, NewLead, NewLeadRepeat, RateEventKind } from '../database/schema';
import type { Lead, LateColumns } from '../domain/lead';

/* The submit decision's protocol: LeadsService plans it, leads/submit-decision.ts decides, a runner per database runs it. */

interface KnownRequest {
  leadId: number;
  repeat: boolean;
  /** The lead's id, or the repeat's. */
  rowId: number;
  hasFallback: boolean;
}

/** The columns a replay's fallback message sets on its stored request's row (the decision adds the state). */
export type ReportedFallback = Pick<LateColumns, 'fallback_chat_id' | 'fallback_message_id' | 'fallback_sent_at'>;

/** Everything a submit decision needs, worked out before the lock; snake case: PostgreSQL's `leads_submit` gets it as JSON. */
export interface SubmitPlan {
  request_id: string;
  now: number;
  /** The lead's time: now, or a late request's time on the landing (never after now). */
  created_at: number;
  ip_hash: string;
  /** The count checked and recorded: `accepted` in time, `late` replayed from a spool (its own limits). */
  count: RateEventKind;
  limits: { visitor_since: number; visitor_limit: number; hourly_since: number; hourly_limit: number };
  /** The stored lead this request repeats: the newest with this username or phone (null: none) in (since, until]. */
  match: { telegram_key: string | null; phone: string | null; since: number; until: number };
  /** The visitor's fields as sent, for the repeat's changed fields. */
  incoming: LeadFields;
  /** The form's fields in order (`LEAD_FIELDS`): which a repeat's changes compare, and their order in its JSON. */
  fields: readonly LeadField[];
  lead: NewLead;
  /** The row of a repeat, but for the lead it repeats and its changes. */
  repeat: Omit<NewLeadRepeat, 'lead_id' | 'changes'>;
  /** A fallback message a replay reports, recorded for a request stored before that has none. */
  fallback: ReportedFallback | null;
  /** A late request's story up to "… later" (`lateStoryPrefix`); its events end it with " as <what>". */
  late_story: string | null;
  /** A late request only: its contacts' hashes, and the lead's row without personal data, stored if one was erased since. */
  erased: { hashes: string[]; lead: NewLead } | null;
}

export type SubmitVerdict =
  | { kind: 'duplicate'; lead_number: number; repeat: boolean; fallback_noted: boolean }
  /** `nth`: the time of the limit-th newest accepted submission in the window (when the window frees a place). */
  | { kind: 'limited'; why: 'visitor' | 'hourly'; nth: number }
  | { kind: 'repeat'; lead_number: number }
  | { kind: 'created'; lead_number: number };

/** The queries of the submit decision, answered at once inside one transaction that no other decision runs beside. */
export interface SubmitQueries {
  findRequest(requestId: string): KnownRequest | undefined;
  /** The time of the `limit`-th newest submission of count `kind` after `since`, of one visitor or all (null); null: fewer. */
  nthAccepted(kind: RateEventKind, keyHash: string | null, since: number, limit: number): number | null;
  recordAccepted(kind: RateEventKind, keyHash: string, at: number): void;
  /** Whether any of these contact hashes was erased at or after `submittedAt` (erased_contacts). */
  erasedSince(hashes: readonly string[], submittedAt: number): boolean;
  /** The newest lead of this username or phone created in (since, until]; a null contact matches nothing. */
  findRepeatTarget(telegramKey: string | null, phone: string | null, since: number, until: number): Lead | undefined;
  insertLead(lead: NewLead): number;
  insertRepeat(repeat: NewLeadRepeat): number;
  /** Records a fallback message for a stored request that has none; false: one was meanwhile. */
  reportFallback(known: KnownRequest, fallback: ReportedFallback): boolean;
  recordEvent(event: { leadId: number; repeatId: number | null; kind: LeadEventKind; at: number; detail: string }): void;
}

/** PostgreSQL's advisory lock of every submit decision: one at a time across instances, as SQLite's BEGIN IMMEDIATE. */
export const SUBMIT_LOCK_KEY = 7_291_000_113;

/** At most this many decisions share one commit: bounds the time the write lock (or the submit lock) is held. */
const MAX_BATCH = 64;

export interface Waiting {
  plan: SubmitPlan;
  resolve: (verdict: SubmitVerdict) => void;
  reject: (error: unknown) => void;
}

/**
 * Runs submit decisions, each as alone, with group commit: the plans asked for in one turn of the event loop, or while
 * a batch is decided, make the next batch. `submit` resolves once the verdict is committed.
 */
export abstract class SubmitRunner {
  private readonly waiting: Waiting[] = [];
  private running = false;

  constructor(protected readonly database: DatabaseHandle) {}

  submit(plan: SubmitPlan): Promise<SubmitVerdict> {
    return new Promise<SubmitVerdict>((resolve, reject) => {
      this.waiting.push({ plan, resolve, reject });
      if (!this.running) {
        this.running = true;
        setImmediate(() => void this.drain());
      }
    });
  }

  private async drain(): Promise<void> {
    try {
      while (this.waiting.length > 0) {
        const batch = this.waiting.splice(0, MAX_BATCH);
        await this.decideBatch(batch).catch((err: unknown) => batch.forEach((w) => w.reject(err)));
      }
    } finally {
      this.running = false;
    }
  }

  /** Decides the batch in one commit and answers each of its plans; a throw rejects every plan of the batch. */
  protected abstract decideBatch(batch: Waiting[]): Promise<void>;
}
