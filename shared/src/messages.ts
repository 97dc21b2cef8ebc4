import type { FieldErrorCode } from './codes.js';
import type { LeadField } from './fields.js';
import { COMMENT_MAX, DATE_MAX, GUESTS_MAX, NAME_MAX, NAME_MIN } from './limits.js';

/** Russian texts shown next to a field for each error code (docs/requirements.md §2.3). */
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
    invalid: 'Телефон в формате +79991234567',
  },
  date: { too_long: `Дата — не длиннее ${DATE_MAX} символов`, invalid: 'Проверьте дату' },
  guests: { too_long: `Не длиннее ${GUESTS_MAX} символов`, invalid: 'Проверьте число гостей' },
  comment: { too_long: `Комментарий — не длиннее ${COMMENT_MAX} символов`, invalid: 'Проверьте комментарий' },
};

export function fieldErrorText(field: LeadField, code: FieldErrorCode): string {
  return FIELD_ERROR_TEXT[field][code] ?? 'Проверьте поле';
}
