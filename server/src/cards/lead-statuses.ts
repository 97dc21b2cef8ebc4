import type { LeadStatus } from '../database/schema';

/** CONTRACT section 6: how each status is shown and which status each of its card buttons sets. */
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

/** A card button's callback_data: `lead:<number>:<status>` (well under Telegram's 64 bytes). */
export function statusCallbackData(leadId: number, to: LeadStatus): string {
  return `lead:${leadId}:${to}`;
}

export const STATUS_CALLBACK = /^lead:(\d{1,15}):([a-z_]{1,20})$/;
