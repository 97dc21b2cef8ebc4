import { LEAD_FIELDS, type LeadField } from '@stickers/shared';

/** The form's own names (docs/requirements.md §8.1): the visitor's fields, the honeypot, the signed start, the id. */
export const HONEYPOT_FIELD = 'company';
export type FormValues = Record<LeadField, string>;

export function readValues(form: FormData): FormValues {
  const values = {} as FormValues;
  for (const field of LEAD_FIELDS) {
    const v = form.get(field);
    values[field] = typeof v === 'string' ? v : '';
  }
  return values;
}
