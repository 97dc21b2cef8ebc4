import type { LeadStatus } from '../database/schema';

/** How each status is shown and which status each of its card buttons sets (docs/requirements.md §5.1, §5.2). */
export const STATUS_LABEL: Record<LeadStatus, string> = {
  new: '🆕 Новая',
  in_progress: '🛠 В работе',
  won: '✅ Заказ',
  lost: '❌ Отказ',
  spam: '🚫 Спам',
};

export const STATUS_BUTTONS: Record<LeadStatus, { text: string; to: LeadStatus }[]> = {
  new: [
    { text: 'В работу', to: 'in_progress' },
    { text: 'Спам', to: 'spam' },
  ],
  in_progress: [
    { text: 'Заказ', to: 'won' },
    { text: 'Отказ', to: 'lost' },
    { text: 'Спам', to: 'spam' },
  ],
  won: [{ text: 'Вернуть в работу', to: 'in_progress' }],
  lost: [{ text: 'Вернуть в работу', to: 'in_progress' }],
  spam: [{ text: 'Не спам', to: 'new' }],
};

/**
 * A card button's callback_data: `lead:<number>:<status shown on the card>:<status to set>` (at most 45 bytes,
 * Telegram allows 64). Carrying the shown status makes a press a compare-and-set against what the presser saw.
 */
export function statusCallbackData(leadId: number, from: LeadStatus, to: LeadStatus): string {
  return `lead:${leadId}:${from}:${to}`;
}

export const STATUS_CALLBACK = /^lead:(\d{1,15}):([a-z_]{1,20}):([a-z_]{1,20})$/;

export function isLeadStatus(value: string): value is LeadStatus {
  return Object.prototype.hasOwnProperty.call(STATUS_LABEL, value);
}

/** True when the card of a lead in `from` offers a button that sets `to`. */
export function isTransition(from: LeadStatus, to: LeadStatus): boolean {
  return STATUS_BUTTONS[from].some((b) => b.to === to);
}
