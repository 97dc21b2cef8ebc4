import type { LeadStatus } from './lead-status';

/** In-process events, each emitted after its change committed, so the outbox and the webhooks act at once. */

/** A lead, a repeat (`repeat`: attached to lead `leadNumber`) or a replay's fallback message. */
export const LEAD_ACCEPTED = 'lead.accepted';
export type LeadAcceptedEvent = { leadNumber: number; requestId: string; repeat: boolean };

/** A lead's erasure, so the webhooks send `lead.anonymised`; `number`: /stickers_forget 42, `contact`: a phone or a username. */
export const LEAD_ANONYMISED = 'lead.anonymised';
export type LeadAnonymisedEvent = { leadNumber: number; reason: 'number' | 'contact' | 'retention'; at: number };

/** A conversation's message stored with its outbox row: the outbox sends it now, the webhooks announce it. */
export const LEAD_MESSAGE = 'lead.message';
export type LeadMessageEvent = { leadNumber: number; messageId: number };

/** A status change with its history row; `userId` and `userName`: who pressed, as the card names them. */
export const LEAD_STATUS_CHANGED = 'lead.status_changed';
export type LeadStatusChangedEvent = { leadNumber: number; from: LeadStatus; to: LeadStatus; userId: number; userName: string; at: number };
