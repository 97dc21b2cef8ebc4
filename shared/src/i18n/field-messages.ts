import type { FieldErrorCode } from '../codes.js';
import type { LeadField } from '../fields.js';

/**
 * The texts of the form's fields both sides know: what is shown next to a field for each error code
 * (docs/requirements.md §2.3). One object per locale (`ru.ts`, `en.ts`); a missing field or a function with other
 * parameters fails the typecheck.
 */
export interface FieldMessages {
  errors: Record<LeadField, Partial<Record<FieldErrorCode, string>>>;
  /** A code a field has no text of its own for. */
  otherError: string;
  /** How to write a phone in `formats` (from `phoneFormats`). */
  phoneInvalid: (formats: string) => string;
  /** Both spellings for RU, the default region. */
  phoneFormatsRu: string;
  /** Another region: its calling code and "or as dialled at home". */
  phoneFormatsOther: (callingCode: string) => string;
  /**
   * The phone field's hint on the form, around the region's example (`+7 916 555-12-34`): worded as an example, so it
   * is not taken for the studio's own number. A language whose visitors may be abroad asks for the country code with
   * an example of its own, since a number without one is read in LEADS_PHONE_REGION.
   */
  phoneHint: (example: string) => string;
  /** Next to both contacts when LEADS_REQUIRED_CONTACTS is `any` and neither is given. */
  anyContactRequired: string;
  /** Added to a contact's hint when it may be left out: `optional` (the other one required) or "or the other" (`any`). */
  contactOptional: string;
  contactOr: { telegram: string; phone: string };
  /** The consent box (with LANDING_PRIVACY_URL): its label around the policy's link, and its errors. */
  consent: { before: string; link: string; required: string; invalid: string };
}
