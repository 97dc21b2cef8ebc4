import {
  CONSENT_FIELD,
  LEAD_FIELDS,
  validateLeadFields,
  type ConsentField,
  type FieldErrors,
  type LeadField,
  type PhoneRegion,
  type RequiredContacts,
} from '@stickers/shared';
import type { FormValues } from './form-fields';

/** A field of the form that can carry an error: the visitor's fields and the consent box. */
export type FormField = LeadField | ConsentField;
export type FormErrors = FieldErrors<FormField>;

/** What the checks need besides the values: the loader's LEADS_PHONE_REGION, LEADS_REQUIRED_CONTACTS and LANDING_PRIVACY_URL. */
export interface FormRules {
  phoneRegion?: PhoneRegion;
  requiredContacts?: RequiredContacts;
  /** With it the consent box is required. */
  privacyUrl?: string | null;
}

/** The name of an input when it is one of the form's checked fields (not a hidden input, the honeypot or the captcha). */
export function formFieldOf(target: EventTarget | null): FormField | null {
  const name = (target as { name?: unknown } | null)?.name;
  if (name === CONSENT_FIELD) return CONSENT_FIELD;
  return typeof name === 'string' && (LEAD_FIELDS as readonly string[]).includes(name) ? (name as LeadField) : null;
}

/** The form's errors by the shared field rules, and the consent box with a privacy URL: what the action finds too. */
export function formErrors(values: FormValues, rules: FormRules): FormErrors {
  const checked = validateLeadFields(values, { phoneRegion: rules.phoneRegion, requiredContacts: rules.requiredContacts });
  return {
    ...(checked.ok ? {} : checked.errors),
    ...(rules.privacyUrl && values[CONSENT_FIELD] !== 'on' ? { [CONSENT_FIELD]: 'required' as const } : {}),
  };
}

/** The shown errors of the fields other than `field` that the rules still find (none appears, a fixed one goes). */
function othersStillFound(shown: FormErrors, field: FormField, found: FormErrors): FormErrors {
  const kept: FormErrors = {};
  for (const key of Object.keys(shown) as FormField[]) if (key !== field && found[key]) kept[key] = shown[key];
  return kept;
}

/**
 * While the visitor edits `field`: its error goes at the first change, whatever the value so far, so nothing is marked
 * or announced while they type; another field's error goes when the rules no longer find it (with `any`, typing one
 * contact answers the pair's "one of the two"). No error appears while typing.
 */
export function errorsWhileEditing(shown: FormErrors, field: FormField, values: FormValues, rules: FormRules): FormErrors {
  return othersStillFound(shown, field, formErrors(values, rules));
}

/**
 * When the visitor leaves a field they edited (or ticks the box): the field's error is the rules' answer for its value
 * now, the other fields' errors only go when the rules no longer find them.
 */
export function errorsAfterEditing(shown: FormErrors, field: FormField, values: FormValues, rules: FormRules): FormErrors {
  const found = formErrors(values, rules);
  const next = othersStillFound(shown, field, found);
  if (found[field]) next[field] = found[field];
  return next;
}

/** Whether two sets of errors show the same thing (to leave the form untouched when an edit changes nothing). */
export function sameErrors(a: FormErrors, b: FormErrors): boolean {
  const keys = Object.keys(a) as FormField[];
  return keys.length === Object.keys(b).length && keys.every((k) => a[k] === b[k]);
}
