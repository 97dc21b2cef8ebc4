import type { OutboxFailure, OutboxRow } from '../repositories/outbox.repository';

/**
 * What a handler's attempt at an outbox row came to, for the runner to record on the row. `record` writes what the
 * attempt changed (the card's message, the trace's event); the runner runs it before the row's own update, and when
 * either write fails after a send, keeps the outcome and records it before anything else (a sent message is never
 * sent again because its record failed).
 * - `done`: finished, for good (sent, delivered, nothing to do, given up, left alone); `attempts` as counted now.
 * - `failed`: a failure on the row's schedule.
 * - `defer`: not a failure, only a later time (a flood pause).
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
