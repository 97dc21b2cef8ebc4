import { COMMENT_MAX, DATE_MAX, GUESTS_MAX, NAME_MAX, NAME_MIN } from '../limits.js';
import type { FieldMessages } from './field-messages.js';

// The English page's hint asks for the country code (a visitor abroad): the error names it too, beside Russia's forms.
const phoneFormatsRu = "+7 916 555-12-34, 8 916 555-12-34, or another country's code and number (+1 415 555 2671)";
const phoneInvalid = (formats: string) => `Phone as ${formats}`;

/** The field texts in English. */
export const en = {
  errors: {
    name: {
      required: 'Enter your name',
      too_short: `Name: at least ${NAME_MIN} characters`,
      too_long: `Name: at most ${NAME_MAX} characters`,
      invalid: 'Check the name',
    },
    telegram: {
      required: 'Enter your Telegram username',
      invalid: 'Telegram username: @name, 5–32 Latin letters, digits or _, starting with a letter',
    },
    phone: {
      required: 'Enter your phone',
      invalid: phoneInvalid(phoneFormatsRu),
    },
    date: { too_long: `Date: at most ${DATE_MAX} characters`, invalid: 'Check the date' },
    guests: { too_long: `At most ${GUESTS_MAX} characters`, invalid: 'Check the number of guests' },
    comment: { too_long: `Comment: at most ${COMMENT_MAX} characters`, invalid: 'Check the comment' },
  },
  otherError: 'Check this field',
  phoneInvalid,
  phoneFormatsRu,
  phoneFormatsOther: (callingCode: string) => `+${callingCode} and the number, or a local number`,
  // An English page's visitor may well be abroad: a US number typed without +1 would be read as the region's.
  phoneHint: () => 'With the country code, e.g. +1 415 555 2671',
  anyContactRequired: 'Enter your Telegram username or phone',
  contactOptional: 'optional',
  contactOr: { telegram: 'or a phone', phone: 'or a Telegram username' },
  consent: {
    before: 'I agree to the processing of my personal data under the ',
    link: 'privacy policy',
    required: 'Your consent to the processing of personal data is needed',
    invalid: 'Check the consent',
  },
} satisfies FieldMessages;
