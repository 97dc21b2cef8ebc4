import { LEAD_FIELDS, type LeadField } from '@stickers/shared';
import { parseRepeatChanges } from '../domain/lead';
import { isPersonalField } from '../domain/personal-fields';

/**
 * A repeat as the inbox's lead page shows it, like the card's repeat block: the form's fields that differ from the
 * lead, each with its value, or null where LEADS_CARD_PII=0 hides a personal value (or erasure dropped it).
 */
export type RepeatChanges = Partial<Record<LeadField, string | null>>;

/** A repeat's stored `changes` (JSON) as the page shows them; an unreadable one as no change. */
export function repeatChanges(json: string, hidePersonal: boolean): RepeatChanges {
  const values = parseRepeatChanges(json);
  const changes: RepeatChanges = {};
  for (const field of LEAD_FIELDS) {
    if (!(field in values)) continue;
    const value = values[field];
    changes[field] =
      hidePersonal && isPersonalField(field) ? null : typeof value === 'string' || typeof value === 'number' ? String(value) : null;
  }
  return changes;
}
