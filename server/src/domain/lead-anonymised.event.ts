/** Emitted after a lead's erasure committed, so the webhooks send `lead.anonymised`. */
export const LEAD_ANONYMISED = 'lead.anonymised';

export class LeadAnonymisedEvent {
  constructor(
    readonly leadNumber: number,
    /** `number` (/stickers_forget 42), `contact` (a phone or a username), `retention`. */
    readonly reason: 'number' | 'contact' | 'retention',
    readonly at: number,
  ) {}
}
