import type { LeadTrace, MissingTrace } from './trace.service';

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
