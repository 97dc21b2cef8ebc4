import {
  DEFAULT_LOCALE,
  formatPhone,
  OPTIONAL_LEAD_FIELDS,
  type CaptchaResult,
  type ConsentBody,
  type LeadFields,
  type Locale,
} from '@stickers/shared';
import { LANDING_MESSAGES } from '~/i18n';

/** The fallback's first line, exactly (docs/requirements.md §8.4), in LANDING_LOCALE's words (`ru` unless told). */
export function fallbackWarning(requestId: string, locale: Locale = DEFAULT_LOCALE): string {
  return LANDING_MESSAGES[locale].message.fallbackWarning(requestId);
}

export interface TelegramText {
  text: string;
  entities: { type: 'text_link'; offset: number; length: number; url: string }[];
}

/**
 * The request as plain text for a direct `sendMessage` (fallback or direct route, docs/requirements.md §8.4), in the
 * locale's words (`ru` unless told). The username is a link through an explicit `text_link` entity; offsets and
 * lengths are UTF-16 code units, which is what a JavaScript string's length counts. A fallback's `reason` (why the
 * server did not take it) is its second line; a captcha that could not be checked gets its line under the heading.
 */
export function requestMessage(
  lead: LeadFields,
  requestId: string,
  options: { fallback: boolean; locale?: Locale; captcha?: CaptchaResult; consent?: ConsentBody; reason?: string },
): TelegramText {
  const t = LANDING_MESSAGES[options.locale ?? DEFAULT_LOCALE].message;
  const lines: string[] = [];
  if (options.fallback) lines.push(t.fallbackWarning(requestId), ...(options.reason ? [t.fallbackReason(options.reason)] : []), '');
  lines.push(options.fallback ? t.title : t.titleWithId(requestId));
  if (options.captcha === 'unchecked') lines.push(t.captchaUnchecked);
  lines.push(`${t.name}: ${lead.name}`);
  const entities: TelegramText['entities'] = [];
  // A contact the visitor left out (LEADS_REQUIRED_CONTACTS) has no line.
  if (lead.telegram) {
    const telegramPrefix = 'Telegram: ';
    const before = [...lines, ''].join('\n').length + telegramPrefix.length;
    lines.push(`${telegramPrefix}${lead.telegram}`);
    entities.push({ type: 'text_link', offset: before, length: lead.telegram.length, url: `https://t.me/${lead.telegram.slice(1)}` });
  }
  if (lead.phone) lines.push(`${t.phone}: ${formatPhone(lead.phone)}`);
  for (const field of OPTIONAL_LEAD_FIELDS) {
    const value = lead[field];
    if (value) lines.push(`${t.optional[field]}: ${value}`);
  }
  if (options.consent) lines.push(t.consent(options.consent.accepted_at));
  return { text: lines.join('\n'), entities };
}
