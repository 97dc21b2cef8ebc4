import { isLocale, type Locale } from '@stickers/shared';
import { dateFormat } from '../clock/local-time';
import { en } from './en';
import { ru, type Messages } from './ru';

export type { Messages } from './ru';

/** The catalogue of each locale (LEADS_LOCALE picks one; docs/architecture.md, "Texts and languages"). */
export const CATALOGUES: Record<Locale, Messages> = { ru, en };

/** The catalogue of a person's Telegram app language (`language_code`: `en`, `en-US`) when there is one, else `fallback`. */
export function catalogueOf(languageCode: string | undefined, fallback: Messages): Messages {
  const code = languageCode?.split('-')[0].toLowerCase();
  return isLocale(code) ? CATALOGUES[code] : fallback;
}

/** A moment as the locale writes it, in `timezone`: `29.11.2026 10:30` (ru), `11/29/2026 10:30 AM` (en). */
export function formatTime(ms: number, timezone: string, intl: string): string {
  return `${formatDay(ms, timezone, intl)} ${formatClock(ms, timezone, intl)}`;
}

const DAY: Intl.DateTimeFormatOptions = { day: '2-digit', month: '2-digit', year: 'numeric' };
const CLOCK: Intl.DateTimeFormatOptions = { hour: '2-digit', minute: '2-digit' };

export function formatDay(ms: number, timezone: string, intl: string): string {
  return dateFormat(DAY, intl, timezone).format(new Date(ms));
}

export function formatClock(ms: number, timezone: string, intl: string): string {
  return dateFormat(CLOCK, intl, timezone).format(new Date(ms));
}
