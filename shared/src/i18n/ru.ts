import { COMMENT_MAX, DATE_MAX, GUESTS_MAX, NAME_MAX, NAME_MIN } from '../limits.js';
import type { FieldMessages } from './field-messages.js';

const phoneFormatsRu = '+7 916 555-12-34 или 8 916 555-12-34';
const phoneInvalid = (formats: string) => `Телефон в формате ${formats}`;

/** The field texts in Russian (the default locale). */
export const ru = {
  errors: {
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
      invalid: phoneInvalid(phoneFormatsRu),
    },
    date: { too_long: `Дата — не длиннее ${DATE_MAX} символов`, invalid: 'Проверьте дату' },
    guests: { too_long: `Не длиннее ${GUESTS_MAX} символов`, invalid: 'Проверьте число гостей' },
    comment: { too_long: `Комментарий — не длиннее ${COMMENT_MAX} символов`, invalid: 'Проверьте комментарий' },
  },
  otherError: 'Проверьте поле',
  phoneInvalid,
  phoneFormatsRu,
  phoneFormatsOther: (callingCode: string) => `+${callingCode} и номер или местный номер`,
  phoneHint: (example: string) => `Например: ${example}`,
  anyContactRequired: 'Укажите ник в Telegram или телефон',
  contactOptional: 'необязательно',
  contactOr: { telegram: 'или телефон', phone: 'или ник в Telegram' },
  consent: {
    before: 'Я согласен(на) на обработку персональных данных в соответствии с ',
    link: 'политикой конфиденциальности',
    required: 'Нужно согласие на обработку персональных данных',
    invalid: 'Проверьте согласие',
  },
} satisfies FieldMessages;
