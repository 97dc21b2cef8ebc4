/** Emitted after a lead, a repeat or a replay's fallback message is committed, so the outbox works at once. */
export const LEAD_ACCEPTED = 'lead.accepted';

export class LeadAcceptedEvent {
  constructor(
    readonly leadNumber: number,
    readonly requestId: string,
    /** A repeat attached to lead `leadNumber` rather than a new lead. */
    readonly repeat: boolean,
  ) {}
}
