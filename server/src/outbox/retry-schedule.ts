/** docs/requirements.md §4.2: from the 5th failure an admin alert (once per 30 minutes); a repeat's ping gives up at its 5th. */
export const RETRY_DELAYS_MS = [5_000, 15_000, 60_000, 5 * 60_000, 15 * 60_000] as const;
export const ALERT_AFTER_FAILURES = 5;
export const PUBLISH_ALERT_INTERVAL_MS = 30 * 60_000;
export const REPEAT_MAX_FAILURES = 5;
/** docs/requirements.md §4.1: a pass takes up to 10 due leads, 10 marked cards and 10 due repeats. */
export const BATCH_SIZE = 10;

/**
 * A failed outbox pass waits 5 s, however many failed before it: once the database takes writes again (room on the
 * disk, PostgreSQL back), cards follow and `/ready` recovers within seconds. A failing pass costs one failed read.
 */
export const PASS_BACKOFF_MS = 5_000;
/** While passes keep failing, their error is logged once a minute (the first, then each twelfth). */
export const PASS_FAILURE_LOG_EVERY = 12;

/** The `failures`-th (1-based) entry of `delays`, the last one for every later failure. */
const nth = (delays: readonly number[], failures: number) => delays[Math.min(Math.max(failures, 1), delays.length) - 1];

export const retryDelayMs = (failures: number): number => nth(RETRY_DELAYS_MS, failures);

/** The "card too long, minimal card sent" alert: once per lead (a year is "never again" for a lead). */
export const MINIMAL_CARD_ALERT_INTERVAL_MS = 365 * 24 * 60 * 60_000;
