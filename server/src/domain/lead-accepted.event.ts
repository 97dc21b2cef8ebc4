/**
 * Emitted (through Nest's event emitter) right after a new lead or a repeat is committed — or a replay reported a
 * fallback message for a stored request —, so the outbox works at once instead of at its next interval
 * (docs/requirements.md §4.1). Features that listen import this file, never the leads module.
 */
export const LEAD_ACCEPTED = 'lead.accepted';

export class LeadAcceptedEvent {
  constructor(
    readonly leadNumber: number,
    readonly requestId: string,
    /** A repeat attached to lead `leadNumber` rather than a new lead. */
    readonly repeat: boolean,
  ) {}
}
