import { LEAD_FIELDS, SOURCE_KEYS, type SourceKey } from '@stickers/shared';
import { parseRepeatChanges, type FormColumns } from '../domain/lead';
import { isPersonalField, SOURCE_COLUMN, withoutPersonal } from '../domain/personal-fields';
import type { TelegramAccount } from '../domain/telegram-account';
import type { ExportRepeatRow, ExportRow } from '../repositories/lead-pages.repository';
import type { ExportedLead, ExportedLeadRepeatDto } from './export.dto';

export const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** The row as it may be shown: an anonymised lead without any personal column (domain/personal-fields.ts). */
export const shown = (r: ExportRow): ExportRow => (r.anonymised_at === null ? r : withoutPersonal(r));

/** A repeat's stored `changes` (JSON) as shown: the fields' names kept, a personal value null when `hidePersonal`. */
export function repeatChanges(json: string, hidePersonal: boolean): ExportedLeadRepeatDto['changes'] {
  const sent = parseRepeatChanges(json);
  const shownValue = (value: unknown) => (typeof value === 'string' || typeof value === 'number' ? String(value) : null);
  return Object.fromEntries(
    LEAD_FIELDS.filter((f) => f in sent).map((f) => [f, hidePersonal && isPersonalField(f) ? null : shownValue(sent[f])]),
  );
}

/** The lead as `GET /leads` and the inbox show it (export.dto.ts), with its repeats (oldest first); times ISO 8601. */
export function toJson(
  row: ExportRow,
  hidePersonal = false,
  repeats: readonly ExportRepeatRow[] = [],
  account: TelegramAccount | null = null,
): ExportedLead {
  const r = hidePersonal ? withoutPersonal(row) : shown(row);
  const hideRepeats = hidePersonal || row.anonymised_at !== null;
  const source = Object.fromEntries(SOURCE_KEYS.map((k) => [k, r[SOURCE_COLUMN[k]]])) as Record<SourceKey, string | null>;
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
    source: Object.values(source).some((v) => v !== null) ? source : null,
    consent:
      r.consent_accepted_at === null || r.consent_policy_url === null
        ? null
        : { accepted_at: iso(r.consent_accepted_at)!, policy_url: r.consent_policy_url },
    repeats: Number(r.repeats),
    repeat_history: repeats.map((repeat) => ({
      request_id: repeat.request_id,
      created_at: iso(repeat.created_at)!,
      received_at: iso(repeat.received_at ?? repeat.created_at)!,
      changes: repeatChanges(repeat.changes, hideRepeats),
    })),
    captcha: r.captcha,
    telegram_account: hideRepeats ? null : account,
  };
}
