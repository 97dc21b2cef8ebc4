import type { ConsentField, FieldErrorCode } from './codes.js';
import type { FieldOptions, LeadField } from './fields.js';
import { DEFAULT_LOCALE, FIELD_MESSAGES, type Locale } from './i18n/index.js';
import { DEFAULT_PHONE_REGION, phoneCallingCode, type PhoneRegion } from './phone.js';

export * from './i18n/index.js';

/**
 * How to write a phone, for the form's error text and hint: both spellings for RU (the default region), the country
 * code and "or as dialled at home" for another.
 */
export function phoneFormats(region: PhoneRegion = DEFAULT_PHONE_REGION, locale: Locale = DEFAULT_LOCALE): string {
  const m = FIELD_MESSAGES[locale];
  return region === 'RU' ? m.phoneFormatsRu : m.phoneFormatsOther(phoneCallingCode(region));
}

/**
 * The phone field's hint on the form, in `locale`'s words around the region's example: for RU the example its error
 * text gives (`Например: +7 916 555-12-34`), so the two never disagree; in English a request for the country code.
 */
export function phoneHint(region: PhoneRegion = DEFAULT_PHONE_REGION, locale: Locale = DEFAULT_LOCALE): string {
  return FIELD_MESSAGES[locale].phoneHint(region === 'RU' ? '+7 916 555-12-34' : `+${phoneCallingCode(region)} …`);
}

/** The options of a field's error text: the phone region, the contacts mode, and the language (`ru` unless told). */
export interface FieldTextOptions extends FieldOptions {
  locale?: Locale;
}

/**
 * The text next to a field for an error code, in `options.locale` (shared/src/i18n/); the phone's `invalid` shows how
 * to write a number in the region (`options.phoneRegion`); a missing contact in `any` mode names the pair.
 */
export function fieldErrorText(field: LeadField | ConsentField, code: FieldErrorCode, options: FieldTextOptions = {}): string {
  const locale = options.locale ?? DEFAULT_LOCALE;
  const m = FIELD_MESSAGES[locale];
  if (field === 'consent') return code === 'required' ? m.consent.required : m.consent.invalid;
  if (field === 'phone' && code === 'invalid') return m.phoneInvalid(phoneFormats(options.phoneRegion, locale));
  if ((field === 'phone' || field === 'telegram') && code === 'required' && options.requiredContacts === 'any') return m.anyContactRequired;
  return m.errors[field][code] ?? m.otherError;
}
