import { CONSENT_FIELD, LEAD_FIELDS, type LeadField } from '@stickers/shared';

/** The form's own names (docs/requirements.md §8.1): the visitor's fields, the honeypot, the signed start, the id. */
export const HONEYPOT_FIELD = 'company';
/**
 * What the visitor typed, handed back with a field error: each field of the form, and the consent box (`consent`:
 * `on` when ticked, else empty; the box exists only with LANDING_PRIVACY_URL).
 */
export type FormValues = Record<LeadField, string> & { [CONSENT_FIELD]?: string };

export function readValues(form: FormData): FormValues {
  const values = {} as FormValues;
  for (const field of LEAD_FIELDS) {
    const v = form.get(field);
    values[field] = typeof v === 'string' ? v : '';
  }
  values[CONSENT_FIELD] = consentTicked(form) ? 'on' : '';
  return values;
}

/** Whether the consent box was ticked: a checkbox is sent (as `on`, its default value) only when it is. */
export function consentTicked(form: FormData): boolean {
  return form.get(CONSENT_FIELD) === 'on';
}
