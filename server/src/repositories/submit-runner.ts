import type { LeadField, LeadFields } from '@stickers/shared';
import type { LeadEventKind, NewLead, NewLeadRepeat, RateEventKind } from '../database/schema';
import type { Lead } from '../domain/lead';

/*
 * The submit decision's protocol, shared by LeadsService (which plans and decides, leads/submit-decision.ts) and the
 * two runners that answer it, one per database: SqliteSubmitRunner (prepared statements, group commit) and
 * PostgresSubmitRunner (one call of the function `leads_submit`). Which one the app has is chosen once, when
 * RepositoriesModule is built (submit-runner.provider.ts).
 */

export interface KnownRequest {
  leadId: number;
  repeat: boolean;
  /** The row of the request: the lead's id, or the repeat's. */
  rowId: number;
  /** Whether a fallback message of this request is recorded already. */
  hasFallback: boolean;
}

/** A fallback message reported for a request already stored. */
export interface ReportedFallback {
  chatId: string;
  messageId: number;
  sentAt: number;
  now: number;
}

/**
 * Everything a submit decision needs, worked out before the lock (LeadsService): SQLite's TypeScript decision and
 * PostgreSQL's function `leads_submit` (migration 0011) both decide from it, in the same order of checks. Snake case:
 * it is sent to PostgreSQL as it is, as JSON.
 */
export interface SubmitPlan {
  request_id: string;
  now: number;
  /** The lead's time: now, or a late request's time on the landing (never after now). */
  created_at: number;
  ip_hash: string;
  /**
   * Which count the request is checked against and recorded in, at its arrival: `accepted` for a request that came in
   * time (LEADS_IP_LIMIT per visitor, LEADS_HOURLY_LIMIT), `late` for one replayed from a landing's spool (the same
   * per-visitor limit among replays, and LEADS_LATE_HOURLY_LIMIT of its own), so that replays after an outage neither
   * use up the visitors' hour nor pass unbounded.
   */
  count: RateEventKind;
  limits: { visitor_since: number; visitor_limit: number; hourly_since: number; hourly_limit: number };
  /**
   * Which stored lead this request repeats: the newest with this username or phone created in (since, until]. A
   * contact the request does not have is null and matches no lead.
   */
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
  fallback: { chat_id: string; message_id: number; sent_at: number } | null;
  /** A late request's story up to "… later" (`lateStoryPrefix`); its events end it with " as <what>". */
  late_story: string | null;
  /**
   * A late request only: the keyed hashes of its contacts (ContactHasher) and the lead's row without its personal data.
   * When one of the contacts was erased at or after the request was submitted on the landing, the replay is stored as
   * that row (the person asked to be forgotten after sending it), never as the person.
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

/** The queries of the submit decision, inside one transaction that no other decision runs beside. */
export interface SubmitQueries {
  findRequest(requestId: string): KnownRequest | undefined;
  /** The time of the `limit`-th newest accepted submission (of the count `kind`) of one visitor after `since`, if any. */
  nthOfVisitor(kind: RateEventKind, keyHash: string, since: number, limit: number): number | null;
  /** The minutes of accepted submissions from `from` on (minute numbers), newest first, with their counts. */
  acceptedMinutes(kind: RateEventKind, from: number): { minute: number; n: number }[];
  /** Accepted submissions with `after < at < before`. */
  acceptedBetween(kind: RateEventKind, after: number, before: number): number;
  /** The time of the (offset + 1)-th newest accepted submission with `after < at < before`. */
  nthAcceptedBetween(kind: RateEventKind, after: number, before: number, offset: number): number | null;
  recordAccepted(kind: RateEventKind, keyHash: string, at: number): void;
  /** The newest lead of this username or phone created in (since, until]; a null contact matches nothing. */
  findRepeatTarget(telegramKey: string | null, phone: string | null, since: number, until: number): Lead | undefined;
  insertLead(lead: NewLead): number;
  insertRepeat(repeat: NewLeadRepeat): number;
  /**
   * Records a fallback message for a stored request that has none: a lead without a card yet may still adopt it,
   * else (and for a repeat) it gets its reply. False when one was recorded meanwhile.
   */
  reportFallback(known: KnownRequest, fallback: ReportedFallback): boolean;
  /** Whether any of these contact hashes was erased at or after `submittedAt` (erased_contacts). */
  erasedSince(hashes: readonly string[], submittedAt: number): boolean;
  /** An event of the lead's story, committed with the decision. */
  recordEvent(event: { leadId: number; repeatId: number | null; kind: LeadEventKind; at: number; detail: string }): void;
}

/** One query of a decision, as the decision asks for it: the runner of the database underneath answers it. */
export type SubmitCall = { [K in keyof SubmitQueries]: { name: K; args: Parameters<SubmitQueries[K]> } }[keyof SubmitQueries];

/**
 * SQLite's submit decision: a generator that yields each query (`yield* q.findRequest(id)`) and gets its answer back;
 * the runner answers synchronously inside one BEGIN IMMEDIATE (no promise, no other work in between). PostgreSQL runs
 * the same decision as its function `leads_submit` instead, in one round trip.
 */
export type Decision<T> = Generator<SubmitCall, T, unknown>;

/** What a decision calls: each query as a step to `yield*`, typed as the query; and the limits' reads built on them. */
export type SubmitSteps = {
  [K in keyof SubmitQueries]: (...args: Parameters<SubmitQueries[K]>) => Generator<SubmitCall, ReturnType<SubmitQueries[K]>, unknown>;
} & {
  /** The `limit`-th newest accepted submission after `since`, of one visitor (its hash) or of all (null), if any. */
  nthAccepted(kind: RateEventKind, keyHash: string | null, since: number, limit: number): Generator<SubmitCall, number | null, unknown>;
};

const QUERY_NAMES: (keyof SubmitQueries)[] = [
  'findRequest',
  'nthOfVisitor',
  'acceptedMinutes',
  'acceptedBetween',
  'nthAcceptedBetween',
  'recordAccepted',
  'findRepeatTarget',
  'insertLead',
  'insertRepeat',
  'reportFallback',
  'erasedSince',
  'recordEvent',
];

export const SUBMIT_STEPS: SubmitSteps = {
  ...(Object.fromEntries(
    QUERY_NAMES.map((name) => [
      name,
      function* (...args: unknown[]): Generator<SubmitCall, unknown, unknown> {
        return yield { name, args } as SubmitCall;
      },
    ]),
  ) as unknown as Omit<SubmitSteps, 'nthAccepted'>),
  nthAccepted: (kind, keyHash, since, limit) =>
    keyHash === null ? nthByMinutes(SUBMIT_STEPS, kind, since, limit) : SUBMIT_STEPS.nthOfVisitor(kind, keyHash, since, limit),
};

/** Answers one yielded call with `queries`. */
function answer(queries: Partial<SubmitQueries>, call: SubmitCall): unknown {
  return (queries[call.name] as (...args: unknown[]) => unknown)(...call.args);
}

/** Runs a decision against synchronous queries (SQLite, inside its transaction; the tests' in-memory queries). */
export function runSync<T>(decision: Decision<T>, queries: Partial<SubmitQueries>): T {
  let step = decision.next();
  while (!step.done) step = decision.next(answer(queries, step.value));
  return step.value;
}

/**
 * The key of the PostgreSQL advisory lock every submit decision takes first (`pg_advisory_xact_lock`): decisions run
 * one at a time across every instance, as they do on SQLite under BEGIN IMMEDIATE. The hourly limit counts every
 * visitor's leads, so any two decisions depend on each other and a narrower lock would not be exact
 * (docs/decisions.md). An arbitrary constant that no other lock of this app uses.
 */
export const SUBMIT_LOCK_KEY = 7_291_000_113;

/** The per-minute counts' minute (rate_minutes). */
export const MINUTE_MS = 60_000;

/**
 * The time of the `limit`-th newest accepted submission after `since` (null: fewer), read from the per-minute counts:
 * newest minute first, adding counts until the limit falls into one minute, then the exact submission
 * inside that minute. The minute the window starts in is counted exactly (only its submissions after `since`). At
 * most 61 count rows and two reads of one minute's submissions, however high the limit: the query that read up to
 * `limit` rows is gone. The same answer as that query gave. Steps of the decision like any query, so both databases'
 * runners answer it.
 */
export function* nthByMinutes(
  q: Pick<SubmitSteps, 'acceptedMinutes' | 'acceptedBetween' | 'nthAcceptedBetween'>,
  kind: RateEventKind,
  since: number,
  limit: number,
): Generator<SubmitCall, number | null, unknown> {
  const first = Math.floor(since / MINUTE_MS);
  let newer = 0;
  for (const { minute, n: counted } of yield* q.acceptedMinutes(kind, first)) {
    const end = (minute + 1) * MINUTE_MS;
    const n = minute === first ? yield* q.acceptedBetween(kind, since, end) : counted;
    if (newer + n >= limit) return yield* q.nthAcceptedBetween(kind, Math.max(since, minute * MINUTE_MS - 1), end, limit - newer - 1);
    newer += n;
  }
  return null;
}

/**
 * Runs one submit decision alone, against the database underneath: the injection token of the runners. `plan` is
 * what PostgreSQL's function decides from; `decide` is the same decision as TypeScript steps, which SQLite's runner
 * answers query by query. Resolves with the verdict once it is committed; rejects with the storage error otherwise.
 */
export abstract class SubmitRunner {
  abstract submit(plan: SubmitPlan, decide: (q: SubmitSteps) => Decision<SubmitVerdict>): Promise<SubmitVerdict>;
}
