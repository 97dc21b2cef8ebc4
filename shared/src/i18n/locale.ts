/**
 * The languages of every text a visitor or the group sees (docs/requirements.md, "Languages"): `ru`, today's texts and
 * the default, and `en`. The landing's LANDING_LOCALE and the server's LEADS_LOCALE each pick one.
 */
export const LOCALES = ['ru', 'en'] as const;
export type Locale = (typeof LOCALES)[number];
export const DEFAULT_LOCALE: Locale = 'ru';

export function isLocale(value: unknown): value is Locale {
  return typeof value === 'string' && (LOCALES as readonly string[]).includes(value);
}

/** A locale setting's value (`variable` names it in the error): empty or unset is the default, `ru`. */
export function parseLocale(variable: string, raw: string | null | undefined): { ok: true; value: Locale } | { ok: false; error: string } {
  const value = (raw ?? '').trim();
  if (value === '') return { ok: true, value: DEFAULT_LOCALE };
  if (isLocale(value)) return { ok: true, value };
  return { ok: false, error: `${variable} must be one of ${LOCALES.join(', ')} (got "${value}")` };
}
