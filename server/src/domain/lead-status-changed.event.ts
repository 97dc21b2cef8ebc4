import type { LeadStatus } from './lead-status';

/** Emitted after a status change committed with its history row (the durable record), so the webhooks announce it at once. */
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
