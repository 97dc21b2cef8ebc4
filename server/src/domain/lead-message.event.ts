/**
 * Emitted (through Nest's event emitter) after a message of a lead's conversation was stored with its outbox row —
 * the visitor's in the bot's private chat, a member's reply in the group, the inbox's — so the outbox sends it now
 * rather than at its next tick, and the webhooks announce `lead.message`. Listeners import this file, never the
 * conversations module.
 */
export const LEAD_MESSAGE = 'lead.message';

export class LeadMessageEvent {
  constructor(
    readonly leadNumber: number,
    readonly messageId: number,
  ) {}
}
