import type { Lead } from '../domain/lead';
import type { OutboxFailure, OutboxRow } from '../repositories/outbox.repository';

/**
 * A handler's attempt at an outbox row, for the runner to record. `record` writes what the attempt changed (the card's
 * message, the trace), before the row's own update; a send whose writes fail is kept and recorded before anything else.
 * `done`: for good (`attempts` as counted now); `failed`: on the row's schedule; `defer`: only a later time, not a
 * failure; `requeue`: behind a card published anew. `stop`: the row's lane sends nothing more in this pass.
 */
export type Outcome = (
  { done: string; attempts?: number } | { failed: OutboxFailure } | { defer: number; error?: string } | { requeue: true }
) & { record?: () => Promise<void>; stop?: boolean };

/** One kind's sender: an attempt at one row. Never throws for the outside world's answers (those are outcomes). */
export interface OutboxHandler {
  handle(row: OutboxRow): Promise<Outcome>;
}

export type PublishedLead = Lead & { chat_id: string; message_id: number; published_at: number };

/** The lead's card is in the group now (not gone, not waiting to be published anew). */
export function hasCard(lead: Lead): lead is PublishedLead {
  return lead.chat_id !== null && lead.message_id !== null && lead.published_at !== null;
}
