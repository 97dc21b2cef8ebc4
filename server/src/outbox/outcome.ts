import type { Lead } from '../domain/lead';
import type { OutboxFailure, OutboxRow } from '../repositories/outbox.repository';

/**
 * A handler's attempt at a row. `record` writes what it changed, before the row's update (kept until written). `done`: for
 * good; `failed`: on the row's schedule; `defer`: a later time, no failure; `requeue`: behind a card published anew;
 * `stop`: its lane sends nothing more this pass.
 */
export type Outcome = (
  { done: string; attempts?: number } | { failed: OutboxFailure } | { defer: number; error?: string } | { requeue: true }
) & { record?: () => Promise<void>; stop?: boolean };

/** One kind's sender. Never throws for the outside world's answers (those are outcomes). */
export interface OutboxHandler {
  handle(row: OutboxRow): Promise<Outcome>;
}

export type PublishedLead = Lead & { chat_id: string; message_id: number; published_at: number };

export function hasCard(lead: Lead): lead is PublishedLead {
  return lead.chat_id !== null && lead.message_id !== null && lead.published_at !== null;
}
