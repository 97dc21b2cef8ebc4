/** Emitted after a conversation's message was stored with its outbox row: the outbox sends it now, the webhooks announce it. */
export const LEAD_MESSAGE = 'lead.message';

export class LeadMessageEvent {
  constructor(
    readonly leadNumber: number,
    readonly messageId: number,
  ) {}
}
