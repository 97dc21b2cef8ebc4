import type { ConsentField, FieldErrorCode } from './codes.js';
import type { FieldOptions, LeadField } from './fields.js';
import { COMMENT_MAX, DATE_MAX, GUESTS_MAX, NAME_MAX, NAME_MIN } from './limits.js';
import { DEFAULT_PHONE_REGION, phoneCallingCode, type PhoneRegion } from './phone.js';

/**
 * How to write a phone, for the form's error text and hint: both spellings for RU (the default region), the country
 * code and "or as dialled at home" for another.
 */
export function phoneFormats(region: PhoneRegion = DEFAULT_PHONE_REGION): string {
  return region === 'RU' ? '+7 916 555-12-34 или 8 916 555-12-34' : `+${phoneCallingCode(region)} и номер или местный номер`;
}

/** The phone field's hint on the form. */
export function phoneHint(region: PhoneRegion = DEFAULT_PHONE_REGION): string {
  return region === 'RU' ? '+7 999 123-45-67' : `+${phoneCallingCode(region)} …`;
}

/** Russian texts shown next to a field for each error code (docs/requirements.md §2.3); the phone's for RU. */
export const FIELD_ERROR_TEXT: Record<LeadField, Partial<Record<FieldErrorCode, string>>> = {
  name: {
    required: 'Укажите имя',
    too_short: `Имя — от ${NAME_MIN} символов`,
    too_long: `Имя — не длиннее ${NAME_MAX} символов`,
    invalid: 'Проверьте имя',
  },
  telegram: {
    required: 'Укажите ник в Telegram',
    invalid: 'Ник в Telegram: @name, 5–32 латинских буквы, цифры или _, начинается с буквы',
  },
  phone: {
    required: 'Укажите телефон',
    invalid: `Телефон в формате ${phoneFormats('RU')}`,
  },
  date: { too_long: `Дата — не длиннее ${DATE_MAX} символов`, invalid: 'Проверьте дату' },
  guests: { too_long: `Не длиннее ${GUESTS_MAX} символов`, invalid: 'Проверьте число гостей' },
  comment: { too_long: `Комментарий — не длиннее ${COMMENT_MAX} символов`, invalid: 'Проверьте комментарий' },
};

/** Next to both contacts when LEADS_REQUIRED_CONTACTS is `any` and neither is given. */
export const ANY_CONTACT_REQUIRED_TEXT = 'Укажите ник в Telegram или телефон';

/** The consent checkbox (shown with LANDING_PRIVACY_URL): its label around the policy's link, and its error. */
export const CONSENT_TEXT = {
  before: 'Я согласен(на) на обработку персональных данных в соответствии с ',
  link: 'политикой конфиденциальности',
  required: 'Нужно согласие на обработку персональных данных',
} as const;

/** The text next to a contact's field when it is optional in the mode (`any`, or the other one required). */
export const CONTACT_OPTIONAL_HINT = 'необязательно';

/**
 * The text next to a field; the phone's `invalid` shows how to write a number in the region (`options.phoneRegion`);
 * a missing contact in `any` mode names the pair.
 */
export function fieldErrorText(field: LeadField | ConsentField, code: FieldErrorCode, options: FieldOptions = {}): string {
  if (field === 'consent') return code === 'required' ? CONSENT_TEXT.required : 'Проверьте согласие';
  if (field === 'phone' && code === 'invalid') return `Телефон в формате ${phoneFormats(options.phoneRegion)}`;
  if ((field === 'phone' || field === 'telegram') && code === 'required' && options.requiredContacts === 'any')
    return ANY_CONTACT_REQUIRED_TEXT;
  return FIELD_ERROR_TEXT[field][code] ?? 'Проверьте поле';
}
