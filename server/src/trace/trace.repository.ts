import type { LeadsDb } from '../database/database';

export interface LeadTrace {
  found: true;
  /** What was asked for, and whether it named the lead itself or one of its repeats. */
  key: string;
  matched: 'lead' | 'repeat' | 'lead_number';
  lead: {
    lead_number: number;
    request_id: string;
    created_at: number;
    status: string;
    published_at: number | null;
    chat_id: string | null;
    message_id: number | null;
    card_format: string | null;
    publish_attempts: number;
    last_error: string | null;
    next_attempt_at: number | null;
    reminded_at: number | null;
    anonymised_at: number | null;
  };
  repeats: {
    request_id: string;
    created_at: number;
    changed_fields: string[];
    notified_at: number | null;
    notify_outcome: string | null;
    notify_attempts: number;
    last_error: string | null;
  }[];
  status_history: { at: number; from: string; to: string; by: string; user_id: number }[];
  events: { at: number; kind: string; detail: string | null; repeat_request_id: string | null }[];
}

export interface MissingTrace {
  found: false;
  key: string;
  message: string;
}

export const NOT_IN_DATABASE =
  'not in the database: check the fallback channel (a message in the leads group starting with "⚠️ Запасной канал" and this request_id)';

/**
 * The whole story of a request from the database, without personal data: the lead, its repeats, every publish
 * attempt and notification, status changes, anonymisation. Used by the CLI and `GET /leads/:request_id/trace`.
 */
export async function readTrace(db: LeadsDb, rawKey: string): Promise<LeadTrace | MissingTrace> {
  const key = rawKey.trim().toLowerCase();
  let leadId: number | undefined;
  let matched: LeadTrace['matched'] = 'lead';
  const number = /^#?(\d{1,15})$/.exec(key);
  if (number) {
    leadId = Number(number[1]);
    matched = 'lead_number';
  } else {
    const asLead = await db.selectFrom('leads').select('id').where('request_id', '=', key).executeTakeFirst();
    if (asLead) leadId = asLead.id;
    else {
      const asRepeat = await db.selectFrom('lead_repeats').select('lead_id').where('request_id', '=', key).executeTakeFirst();
      if (asRepeat) {
        leadId = asRepeat.lead_id;
        matched = 'repeat';
      }
    }
  }
  const lead = leadId === undefined ? undefined : await db.selectFrom('leads').selectAll().where('id', '=', leadId).executeTakeFirst();
  if (!lead) return { found: false, key: rawKey, message: NOT_IN_DATABASE };

  const repeats = await db
    .selectFrom('lead_repeats')
    .selectAll()
    .where('lead_id', '=', lead.id)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  const requestOf = new Map(repeats.map((r) => [r.id, r.request_id]));
  const history = await db
    .selectFrom('lead_status_changes')
    .selectAll()
    .where('lead_id', '=', lead.id)
    .orderBy('at')
    .orderBy('id')
    .execute();
  const events = await db.selectFrom('lead_events').selectAll().where('lead_id', '=', lead.id).orderBy('id').execute();
  return {
    found: true,
    key: rawKey,
    matched,
    lead: {
      lead_number: lead.id,
      request_id: lead.request_id,
      created_at: lead.created_at,
      status: lead.status,
      published_at: lead.published_at,
      chat_id: lead.chat_id,
      message_id: lead.message_id,
      card_format: lead.card_format,
      publish_attempts: lead.publish_attempts,
      last_error: lead.last_error,
      next_attempt_at: lead.published_at === null ? lead.next_attempt_at : null,
      reminded_at: lead.reminded_at,
      anonymised_at: lead.anonymised_at,
    },
    repeats: repeats.map((r) => ({
      request_id: r.request_id,
      created_at: r.created_at,
      changed_fields: Object.keys(JSON.parse(r.changes) as object),
      notified_at: r.notified_at,
      notify_outcome: r.notify_outcome,
      notify_attempts: r.notify_attempts,
      last_error: r.last_error,
    })),
    status_history: history.map((h) => ({ at: h.at, from: h.from_status, to: h.to_status, by: h.user_name, user_id: h.user_id })),
    events: events.map((e) => ({
      at: e.at,
      kind: e.kind,
      detail: e.detail,
      repeat_request_id: e.repeat_id !== null ? (requestOf.get(e.repeat_id) ?? null) : null,
    })),
  };
}

const iso = (ms: number | null) => (ms === null ? '—' : new Date(ms).toISOString());

/** The trace as lines a person reads in a terminal. */
export function formatTrace(trace: LeadTrace | MissingTrace): string {
  if (!trace.found) return `${trace.key}: ${trace.message}`;
  const { lead } = trace;
  const lines = [
    `request ${trace.key}: ${trace.matched === 'repeat' ? `a repeat of lead #${lead.lead_number}` : `lead #${lead.lead_number}`}`,
    `  stored        ${iso(lead.created_at)} (request_id ${lead.request_id})`,
    `  status        ${lead.status}`,
    lead.published_at === null
      ? `  card          not published: ${lead.publish_attempts} attempt(s), last error: ${lead.last_error ?? '—'}, next attempt ${iso(lead.next_attempt_at)}`
      : `  card          published ${iso(lead.published_at)} in chat ${lead.chat_id}, message ${lead.message_id}${lead.card_format === 'plain' ? ' (plain text)' : ''} after ${lead.publish_attempts} failed attempt(s)`,
  ];
  if (lead.reminded_at !== null) lines.push(`  reminder      ${iso(lead.reminded_at)}`);
  if (lead.anonymised_at !== null) lines.push(`  anonymised    ${iso(lead.anonymised_at)}`);
  lines.push(`  repeats       ${trace.repeats.length}`);
  for (const r of trace.repeats) {
    lines.push(
      `    ${iso(r.created_at)} request_id ${r.request_id}, changed: ${r.changed_fields.join(', ') || 'nothing'}, ` +
        `notification: ${r.notify_outcome ?? `pending (${r.notify_attempts} failed attempt(s)${r.last_error ? `, last error: ${r.last_error}` : ''})`}`,
    );
  }
  lines.push(`  status changes ${trace.status_history.length}`);
  for (const h of trace.status_history) lines.push(`    ${iso(h.at)} ${h.from} → ${h.to} by ${h.by} (${h.user_id})`);
  lines.push(`  events`);
  for (const e of trace.events)
    lines.push(
      `    ${iso(e.at)} ${e.kind}${e.repeat_request_id ? ` [repeat ${e.repeat_request_id}]` : ''}${e.detail ? `: ${e.detail}` : ''}`,
    );
  return lines.join('\n');
}
