import { LEAD_FIELDS, type CaptchaResult, type LeadField } from '@stickers/shared';
import { parseRepeatChanges, type FormColumns } from '../domain/lead';
import type { LeadStatus } from '../domain/lead-status';
import { isPersonalField, withoutPersonal } from '../domain/personal-fields';
import type { TelegramAccount } from '../domain/telegram-account';
import type { ExportRepeatRow, ExportRow } from '../repositories/lead-pages.repository';

/** A lead as `GET /leads` and the inbox show it, made from a row of the export's read. */

/**
 * A lead as `GET /leads` shows it: its number, status and times, then every field of the form (`LEAD_FIELDS`, in
 * that order), where it came from and how many repeats. Personal fields (and the source's) are null once anonymised.
 * Times are ISO 8601 (UTC).
 */
export interface ExportedLead extends FormColumns {
  lead_number: number;
  request_id: string;
  status: LeadStatus;
  status_changed_by: string | null;
  status_changed_at: string | null;
  created_at: string;
  received_at: string;
  published_at: string | null;
  anonymised_at: string | null;
  /** When its state last changed: created, a status, a repeat, its card published, erased (`updated_since`). */
  updated_at: string;
  /** Where the lead came from: the landing's name, the UTM parameters, the referrer's host; null without. */
  source: ExportedSource | null;
  /** The visitor's consent as the landing sent it (time ISO 8601); null without. Kept when the lead is anonymised. */
  consent: ExportedConsent | null;
  repeats: number;
  /** Each repeat, oldest first, with the values it sent for the fields that changed. */
  repeat_history: ExportedRepeat[];
  /** What came of the landing's captcha: `passed`, `unchecked` (its provider was unreachable), null without one. */
  captcha: CaptchaResult | null;
  /**
   * The Telegram account the visitor bound by opening the lead's "Continue in Telegram" link; null without one.
   * Personal: null where personal fields are hidden and once the lead is anonymised.
   */
  telegram_account: TelegramAccount | null;
}

/**
 * A repeat of a lead: its own request, when the visitor sent it and when it arrived, and the form's fields that
 * differed from the lead, each with the value the repeat sent — null where the value is personal and hidden
 * (LEADS_CARD_PII=0 for the inbox) or erased with the lead.
 */
export interface ExportedRepeat {
  request_id: string;
  created_at: string;
  received_at: string;
  changes: Partial<Record<LeadField, string | null>>;
}

export interface ExportedConsent {
  accepted_at: string;
  policy_url: string;
}

export interface ExportedSource {
  landing: string | null;
  utm_source: string | null;
  utm_medium: string | null;
  utm_campaign: string | null;
  utm_content: string | null;
  utm_term: string | null;
  referrer: string | null;
}

export interface ExportPage {
  leads: ExportedLead[];
  /** Pass it back as `cursor` for the next (older) page; null on the last page. */
  next_cursor: string | null;
}

export const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** The row as it may be shown: an anonymised lead without any personal column (domain/personal-fields.ts). */
export const shown = (r: ExportRow): ExportRow => (r.anonymised_at === null ? r : withoutPersonal(r));

/** A repeat as shown: personal values null when `hidePersonal` (or the lead is erased), the fields' names kept. */
export function repeatJson(repeat: ExportRepeatRow, hidePersonal: boolean): ExportedRepeat {
  const sent = parseRepeatChanges(repeat.changes);
  const changes: ExportedRepeat['changes'] = {};
  for (const field of LEAD_FIELDS) {
    if (!(field in sent)) continue;
    const value = sent[field];
    const shownValue = typeof value === 'string' || typeof value === 'number' ? String(value) : null;
    changes[field] = hidePersonal && isPersonalField(field) ? null : shownValue;
  }
  return {
    request_id: repeat.request_id,
    created_at: iso(repeat.created_at)!,
    received_at: iso(repeat.received_at ?? repeat.created_at)!,
    changes,
  };
}

/** The lead as `GET /leads` shows it, with its repeats (oldest first; none read: an empty list). */
export function toJson(
  row: ExportRow,
  hidePersonal = false,
  repeats: readonly ExportRepeatRow[] = [],
  account: TelegramAccount | null = null,
): ExportedLead {
  const r = hidePersonal ? withoutPersonal(row) : shown(row);
  const hideRepeats = hidePersonal || row.anonymised_at !== null;
  return {
    lead_number: r.id,
    request_id: r.request_id,
    status: r.status,
    status_changed_by: r.status_changed_by,
    status_changed_at: iso(r.status_changed_at),
    created_at: iso(r.created_at)!,
    received_at: iso(r.received_at ?? r.created_at)!,
    published_at: iso(r.published_at),
    anonymised_at: iso(r.anonymised_at),
    updated_at: iso(r.updated_at)!,
    ...(Object.fromEntries(LEAD_FIELDS.map((f) => [f, r[f]])) as FormColumns),
    source: sourceOf(r),
    consent: consentOf(r),
    repeats: Number(r.repeats),
    repeat_history: repeats.map((repeat) => repeatJson(repeat, hideRepeats)),
    captcha: r.captcha,
    telegram_account: hidePersonal || r.anonymised_at !== null ? null : account,
  };
}

function sourceOf(r: ExportRow): ExportedSource | null {
  const source: ExportedSource = {
    landing: r.source_landing,
    utm_source: r.utm_source,
    utm_medium: r.utm_medium,
    utm_campaign: r.utm_campaign,
    utm_content: r.utm_content,
    utm_term: r.utm_term,
    referrer: r.source_referrer,
  };
  return Object.values(source).some((v) => v !== null) ? source : null;
}

function consentOf(r: ExportRow): ExportedConsent | null {
  if (r.consent_accepted_at === null || r.consent_policy_url === null) return null;
  return { accepted_at: iso(r.consent_accepted_at)!, policy_url: r.consent_policy_url };
}
