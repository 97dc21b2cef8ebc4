import { OPTIONAL_LEAD_FIELDS, type CaptchaResult, type ConsentBody, type LeadFields, type OptionalLeadField } from '@stickers/shared';

/** The label of each optional field's line in the message, as the card names it. */
const OPTIONAL_LABEL: Record<OptionalLeadField, string> = {
  date: 'Дата',
  guests: 'Гостей',
  comment: 'Комментарий',
};

/** The fallback's first line, exactly (docs/requirements.md §8.4). */
export function fallbackWarning(requestId: string): string {
  return `⚠️ Запасной канал: сервер заявок не ответил — заявки нет в базе (request_id ${requestId})`;
}

/** The line of a request whose captcha could not be checked (the card says the same). */
export const CAPTCHA_UNCHECKED_LINE = '⚠️ Капча не проверена: сервис проверки был недоступен';

export interface TelegramText {
  text: string;
  entities: { type: 'text_link'; offset: number; length: number; url: string }[];
}

/**
 * The request as plain text for a direct `sendMessage` (fallback or direct route, docs/requirements.md §8.4). The
 * username is a link through an explicit `text_link` entity; offsets and lengths are UTF-16 code units, which is
 * what a JavaScript string's length counts. A captcha that could not be checked gets its line under the heading.
 */
export function requestMessage(
  lead: LeadFields,
  requestId: string,
  options: { fallback: boolean; captcha?: CaptchaResult; consent?: ConsentBody },
): TelegramText {
  const lines: string[] = [];
  if (options.fallback) lines.push(fallbackWarning(requestId), '');
  lines.push(options.fallback ? 'Заявка с сайта' : `Заявка с сайта (request_id ${requestId})`);
  if (options.captcha === 'unchecked') lines.push(CAPTCHA_UNCHECKED_LINE);
  lines.push(`Имя: ${lead.name}`);
  const entities: TelegramText['entities'] = [];
  // A contact the visitor left out (LEADS_REQUIRED_CONTACTS) has no line.
  if (lead.telegram) {
    const telegramPrefix = 'Telegram: ';
    const before = [...lines, ''].join('\n').length + telegramPrefix.length;
    lines.push(`${telegramPrefix}${lead.telegram}`);
    entities.push({ type: 'text_link', offset: before, length: lead.telegram.length, url: `https://t.me/${lead.telegram.slice(1)}` });
  }
  if (lead.phone) lines.push(`Телефон: ${lead.phone}`);
  for (const field of OPTIONAL_LEAD_FIELDS) {
    const value = lead[field];
    if (value) lines.push(`${OPTIONAL_LABEL[field]}: ${value}`);
  }
  if (options.consent) lines.push(`${CONSENT_MESSAGE_LINE} ${options.consent.accepted_at}`);
  return { text: lines.join('\n'), entities };
}

/** The consent's line in the message (its time, ISO 8601 UTC, as sent to the server), as the card words it. */
export const CONSENT_MESSAGE_LINE = '☑️ Согласие на обработку данных:';
