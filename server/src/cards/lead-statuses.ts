import { LEAD_STATUSES, LEAD_TRANSITIONS, type LeadStatus, type TransitionFrom } from '../domain/lead-status';

/** How each status is shown on the card and in the bot's answers (docs/requirements.md §5.1). */
export const STATUS_LABEL: Record<LeadStatus, string> = {
  new: '🆕 Новая',
  in_progress: '🛠 В работе',
  won: '✅ Заказ',
  lost: '❌ Отказ',
  spam: '🚫 Спам',
};

/** The words on each button of a card in status `from`: one per change the domain allows (domain/lead-status.ts). */
const BUTTON_TEXT: { [S in LeadStatus]: Record<TransitionFrom<S>, string> } = {
  new: { in_progress: 'В работу', spam: 'Спам' },
  in_progress: { won: 'Заказ', lost: 'Отказ', spam: 'Спам' },
  won: { in_progress: 'Вернуть в работу' },
  lost: { in_progress: 'Вернуть в работу' },
  spam: { new: 'Не спам' },
};

/** The buttons of a card in each status, in the order of LEAD_TRANSITIONS (docs/requirements.md §5.2). */
export const STATUS_BUTTONS = Object.fromEntries(
  LEAD_STATUSES.map((from) => [
    from,
    (LEAD_TRANSITIONS[from] as readonly LeadStatus[]).map((to) => ({ text: (BUTTON_TEXT[from] as Record<LeadStatus, string>)[to], to })),
  ]),
) as Record<LeadStatus, { text: string; to: LeadStatus }[]>;

/**
 * A card button's callback_data: `lead:<number>:<status shown on the card>:<status to set>` (at most 45 bytes,
 * Telegram allows 64). Carrying the shown status makes a press a compare-and-set against what the presser saw.
 */
export function statusCallbackData(leadId: number, from: LeadStatus, to: LeadStatus): string {
  return `lead:${leadId}:${from}:${to}`;
}

export const STATUS_CALLBACK = /^lead:(\d{1,15}):([a-z_]{1,20}):([a-z_]{1,20})$/;
