import type { LeadStatus } from './lead-status';

/**
 * Emitted (through Nest's event emitter) right after a press changed a lead's status and the change committed with its
 * `lead_status_changes` row, so the webhooks announce `lead.status_changed` at once rather than at their
 * next interval. The row is the durable record: a listener that misses the event (a crash) loses nothing. Features
 * that listen import this file, never the lead-status module.
 */
export const LEAD_STATUS_CHANGED = 'lead.status_changed';

export class LeadStatusChangedEvent {
  constructor(
    readonly leadNumber: number,
    readonly from: LeadStatus,
    readonly to: LeadStatus,
    /** The Telegram user who pressed, and the name shown on the card. */
    readonly userId: number,
    readonly userName: string,
    readonly at: number,
  ) {}
}
