import { LEAD_FIELDS } from '@stickers/shared';
import { erasedLeadColumns } from '../../src/domain/personal-fields';
import type { SubmitPlan } from '../../src/repositories/submit-runner';

const HOUR = 60 * 60 * 1000;
const DAY = 24 * HOUR;
let counter = 0;

/** The form's fields of a plan: a fresh contact unless given. */
export interface PlanFields {
  name?: string;
  telegram?: string | null;
  phone?: string | null;
  date?: string | null;
  guests?: string | null;
  comment?: string | null;
}

/**
 * A submit plan as LeadsService builds it, for one request at `now`: in time (`accepted`) unless `late` gives the
 * visitor's time on the landing and its story. Limits of 1000 unless given.
 */
export function planOf(
  now: number,
  options: {
    fields?: PlanFields;
    requestId?: string;
    ipHash?: string;
    limits?: { visitor?: number; hourly?: number };
    late?: { createdAt: number; story: string };
    fallback?: SubmitPlan['fallback'];
    erased?: string[];
  } = {},
): SubmitPlan {
  counter += 1;
  const n = `${process.pid % 1000}_${counter}`;
  const fields = {
    name: 'Анна Ким',
    telegram: `@Anna_${n}`,
    phone: `+7999${String(process.pid % 1000).padStart(3, '0')}${String(counter).padStart(4, '0')}`,
    date: '14 февраля',
    guests: '30',
    comment: null,
    ...options.fields,
  };
  const requestId = options.requestId ?? crypto.randomUUID();
  const ipHash = options.ipHash ?? `visitor-${n}`;
  const createdAt = options.late?.createdAt ?? now;
  const telegramKey = fields.telegram?.toLowerCase() ?? null;
  const late = options.late ? { received_at: now, late_route: 'fallback', late_reason: 'timeout' } : { received_at: now };
  const lead = {
    request_id: requestId,
    ...fields,
    telegram_key: telegramKey,
    ip_hash: ipHash,
    created_at: createdAt,
    ...late,
  };
  return {
    request_id: requestId,
    now,
    created_at: createdAt,
    ip_hash: ipHash,
    count: options.late ? 'late' : 'accepted',
    limits: {
      visitor_since: now - HOUR,
      visitor_limit: options.limits?.visitor ?? 1000,
      hourly_since: now - HOUR,
      hourly_limit: options.limits?.hourly ?? 1000,
    },
    match: { telegram_key: telegramKey, phone: fields.phone, since: createdAt - DAY, until: createdAt + DAY },
    incoming: fields,
    fields: LEAD_FIELDS,
    lead,
    repeat: { request_id: requestId, created_at: createdAt, ip_hash: ipHash, ...late },
    fallback: options.fallback ?? null,
    late_story: options.late?.story ?? null,
    erased: options.erased ? { hashes: options.erased, lead: { ...lead, ...erasedLeadColumns(), anonymised_at: now } } : null,
  };
}
