import type { Lead } from '../domain/lead';
import type { OutboxFailure, OutboxRow } from '../repositories/outbox.repository';
import type { Retry } from './telegram-answer.policy';

/**
 * What a handler's attempt at an outbox row came to, for the runner to record on the row. `record` writes what the
 * attempt changed (the card's message, the trace); the runner runs it before the row's own update and, when either
 * write fails after a send, keeps the outcome and records it before anything else (never sent twice for that).
 * - `done`: finished for good (sent, nothing to do, given up); `attempts` as counted now.
 * - `failed`: a failure on the row's schedule. `defer`: only a later time (a flood pause), not a failure.
 * - `requeue`: to the end of its lead's queue (behind a card published anew).
 * `stop`: the row's lane sends nothing more in this pass (flood control, an endpoint that does not answer).
 */
export type Outcome = (
  { done: string; attempts?: number } | { failed: OutboxFailure } | { defer: number; error?: string } | { requeue: true }
) & { record?: () => Promise<void>; stop?: boolean };

/** One kind's sender: an attempt at one row. Never throws for the outside world's answers (those are outcomes). */
export interface OutboxHandler {
  handle(row: OutboxRow): Promise<Outcome>;
}

/** The policy's retry as an outcome: the `failures`-th failure, the next attempt `delayMs` after `now`. */
export function retryLater(next: Retry, now: number, error: string, record?: () => Promise<void>): Outcome {
  return { failed: { attempts: next.failures, nextAt: now + next.delayMs, error }, record };
}

export type PublishedLead = Lead & { chat_id: string; message_id: number; published_at: number };

/** The lead's card is in the group now (not gone, not waiting to be published anew). */
export function hasCard(lead: Lead): lead is PublishedLead {
  return lead.chat_id !== null && lead.message_id !== null && lead.published_at !== null;
}
