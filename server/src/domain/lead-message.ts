/** `in`: from the visitor (relayed into the group); `out`: from the team (sent to the visitor). */
export type MessageDirection = 'in' | 'out';
/** `queued` until the outbox sent it (`delivered`) or gave it up (`failed`, with the error). */
export type MessageState = 'queued' | 'delivered' | 'failed';
/** What a message carries besides text; null for a text message. */
export const MESSAGE_MEDIA = ['photo', 'document', 'voice', 'video', 'sticker', 'other'] as const;
export type MessageMedia = (typeof MESSAGE_MEDIA)[number];
