import { LEAD_TRANSITIONS, type LeadStatus } from '../domain/lead-status';
import type { Messages } from '../i18n';

/** The buttons of a card in status `from`, in the order of LEAD_TRANSITIONS (docs/requirements.md §5.2). */
export function statusButtons(t: Messages, from: LeadStatus): { text: string; to: LeadStatus }[] {
  const words = t.buttons[from] as Record<LeadStatus, string>;
  return (LEAD_TRANSITIONS[from] as readonly LeadStatus[]).map((to) => ({ text: words[to], to }));
}

/**
 * A card button's callback_data: `lead:<number>:<status shown on the card>:<status to set>` (at most 45 bytes,
 * Telegram allows 64). Carrying the shown status makes a press a compare-and-set against what the presser saw.
 */
export function statusCallbackData(leadId: number, from: LeadStatus, to: LeadStatus): string {
  return `lead:${leadId}:${from}:${to}`;
}

export const STATUS_CALLBACK = /^lead:(\d{1,15}):([a-z_]{1,20}):([a-z_]{1,20})$/;
