import type { Locale } from '@stickers/shared';
import { en } from './en';
import { ru, type LandingMessages } from './ru';

export type { LandingMessages } from './ru';

/**
 * The page's catalogue of each locale. Both are in the browser bundle (a few kilobytes): the page picks the one the
 * loader names (LANDING_LOCALE), and the form's checks in the browser word their errors from it.
 */
export const LANDING_MESSAGES: Record<Locale, LandingMessages> = { ru, en };
