import type { LeadField, LeadFields } from '@stickers/shared';
import type { LeadEventKind, NewLead, NewLeadRepeat, RateEventKind } from '../database/schema';
import type { Lead, LateColumns } from '../domain/lead';

/*
 * The submit decision's protocol, shared by LeadsService (which plans it), the decision itself
 * (leads/submit-decision.ts, plain code over `SubmitQueries`) and the two runners, one per database (chosen once by
 * RepositoriesModule): SqliteSubmitRunner and PostgresSubmitRunner (the function `leads_submit_batch`, migration 0023).
 */

export interface KnownRequest {
  leadId: number;
  repeat: boolean;
  /** The row of the request: the lead's id, or the repeat's. */
  rowId: number;
  /** Whether a fallback message of this request is recorded already. */
  hasFallback: boolean;
}

/** The `fallback_` columns a replay's fallback message sets on its stored request's row (the decision adds the state). */
export type ReportedFallback = Pick<FallbackColumns, 'fallback_chat_id' | 'fallback_message_id' | 'fallback_sent_at'> &
  Partial<FallbackColumns>;
type FallbackColumns = {
  [K in keyof LateColumns as K extends `fallback_${string}` ? (K extends 'fallback_state' ? never : K) : never]: LateColumns[K];
};

/**
 * Everything a submit decision needs, worked out before the lock (LeadsService): SQLite's TypeScript decision and
 * PostgreSQL's function `leads_submit` both decide from it, in the same order of checks. Snake case: it is sent to
 * PostgreSQL as it is, as JSON. Every column the decision writes comes from it, whole: the decision names none.
 */
export interface SubmitPlan {
  request_id: string;
  now: number;
  /** The lead's time: now, or a late request's time on the landing (never after now). */
  created_at: number;
  ip_hash: string;
  /**
   * The count the request is checked against and recorded in: `accepted` in time (LEADS_IP_LIMIT, LEADS_HOURLY_LIMIT),
   * `late` replayed from a spool (the per-visitor limit among replays, LEADS_LATE_HOURLY_LIMIT): replays after an
   * outage neither use up the visitors' hour nor pass unbounded.
   */
  count: RateEventKind;
  limits: { visitor_since: number; visitor_limit: number; hourly_since: number; hourly_limit: number };
  /** The stored lead this request repeats: the newest with this username or phone (null: none) in (since, until]. */
  match: { telegram_key: string | null; phone: string | null; since: number; until: number };
  /** The visitor's fields as sent, for the repeat's changed fields. */
  incoming: LeadFields;
  /** The form's fields in order (`LEAD_FIELDS`): which a repeat's changes compare, and their order in its JSON. */
  fields: readonly LeadField[];
  /** The row of a new lead, whole. */
  lead: NewLead;
  /** The row of a repeat, but for the lead it repeats and its changes. */
  repeat: Omit<NewLeadRepeat, 'lead_id' | 'changes'>;
  /** A fallback message a replay reports, recorded for a request stored before that has none. */
  fallback: ReportedFallback | null;
  /** A late request's story up to "… later" (`lateStoryPrefix`); its events end it with " as <what>". */
  late_story: string | null;
  /**
   * A late request only: its contacts' keyed hashes (ContactHasher) and the lead's row without personal data, stored
   * instead when a contact was erased at or after the request was sent on the landing.
   */
  erased: { hashes: string[]; lead: NewLead } | null;
}

/** What a submit decision came to, as both databases answer it. */
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
  /** Records a fallback message for a stored request that has none (RowWrites.reportFallback); false: one was meanwhile. */
  reportFallback(known: KnownRequest, fallback: ReportedFallback): boolean;
  /** An event of the lead's story, committed with the decision. */
  recordEvent(event: { leadId: number; repeatId: number | null; kind: LeadEventKind; at: number; detail: string }): void;
}

/**
 * The PostgreSQL advisory lock every submit decision takes first: decisions run one at a time across instances, as on
 * SQLite under BEGIN IMMEDIATE (the hourly limit makes any two depend on each other, docs/decisions.md).
 */
export const SUBMIT_LOCK_KEY = 7_291_000_113;

/** At most this many decisions share one commit: bounds the time the write lock (or the submit lock) is held. */
const MAX_BATCH = 64;

/** A plan waiting for its batch, and how to answer it. */
export interface Waiting {
  plan: SubmitPlan;
  resolve: (verdict: SubmitVerdict) => void;
  reject: (error: unknown) => void;
}

/**
 * Runs submit decisions against the database underneath, each as alone, with group commit: the injection token of the
 * runners. The plans asked for in one turn of the event loop (`setImmediate`), and while a batch is decided, wait for
 * the next batch; batches of at most MAX_BATCH go one after another, never two at once. `submit` resolves with the
 * verdict on `plan` once it is committed, and rejects with the storage error otherwise.
 */
export abstract class SubmitRunner {
  private readonly waiting: Waiting[] = [];
  private running = false;

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
      while (this.waiting.length > 0) await this.decideBatch(this.waiting.splice(0, MAX_BATCH));
    } finally {
      this.running = false;
    }
  }

  /** Decides the batch in one commit and answers each of its plans. */
  protected abstract decideBatch(batch: Waiting[]): Promise<void>;
}
