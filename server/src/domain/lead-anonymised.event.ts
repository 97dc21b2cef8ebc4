/**
 * Emitted (through Nest's event emitter) after a lead's personal fields were erased and the erase committed — by
 * `/stickers_forget` (a number or a contact) or by retention — so the webhooks can send
 * `lead.anonymised`. Features that listen import this file, never the anonymisation module.
 */
export const LEAD_ANONYMISED = 'lead.anonymised';

export class LeadAnonymisedEvent {
  constructor(
    readonly leadNumber: number,
    /** `number` (/stickers_forget 42), `contact` (a phone or a username), `retention`. */
    readonly reason: 'number' | 'contact' | 'retention',
    readonly at: number,
  ) {}
}
