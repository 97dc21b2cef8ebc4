import { LEAD_TRANSITIONS, type LeadStatus } from '../domain/lead-status';
import type { Messages } from '../i18n';

/** The buttons of a card in status `from`, in the order of LEAD_TRANSITIONS (docs/requirements.md §5.2). */
export function statusButtons(t: Messages, from: LeadStatus): { text: string; to: LeadStatus }[] {
  const words = t.buttons[from] as Record<LeadStatus, string>;
  return (LEAD_TRANSITIONS[from] as readonly LeadStatus[]).map((to) => ({ text: words[to], to }));
}

/** `lead:<number>:<shown status>:<status to set>` (≤ 45 bytes of 64): a press is a compare-and-set on what was seen. */
export function statusCallbackData(leadId: number, from: LeadStatus, to: LeadStatus): string {
  return `lead:${leadId}:${from}:${to}`;
}

export const STATUS_CALLBACK = /^lead:(\d{1,15}):([a-z_]{1,20}):([a-z_]{1,20})$/;
