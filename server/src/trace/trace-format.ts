import { terminalSafe } from '../cli/terminal-text';
import type { LeadTrace, TraceResult } from './trace.service';

const iso = (ms: number | null) => (ms === null ? '—' : new Date(ms).toISOString());

/** A card never tried is due from the start (its outbox row says 0): "due now", not 1970. */
const nextAttempt = (lead: Pick<LeadTrace['lead'], 'next_attempt_at' | 'created_at'>) =>
  lead.next_attempt_at !== null && lead.next_attempt_at < lead.created_at ? 'due now' : iso(lead.next_attempt_at);

const FALLBACK_STATE: Record<string, string> = {
  pending: 'not looked at yet (it may become the card)',
  adopted: 'edited into the card (one message in the group)',
  answer: 'waiting for its reply that the lead is stored (✅ and its number)',
  answered: 'answered with a reply that the lead is stored (✅ and its number)',
  gone: 'deleted in the group: no reply',
  refused: 'Telegram refused the reply: left as it is',
  gave_up: 'the reply failed 5 times: left as it is',
};

/** How a request came: late (where the landing sent it, when the server got it), its fallback message, source and consent. */
function requestLines(row: Pick<LeadTrace['lead'], 'late' | 'fallback' | 'source' | 'consent'>, indent: string): string[] {
  const { late, fallback, source, consent } = row;
  const lines: string[] = [];
  if (late) {
    const after = late.received_at === null ? '' : ` (${Math.round((late.received_at - late.submitted_at) / 1000)} s later)`;
    lines.push(
      `${indent}late          submitted on the landing ${iso(late.submitted_at)}, route ${late.route}${late.reason ? ` (${late.reason})` : ''}; ` +
        `replayed from the landing's spool, received ${iso(late.received_at)}${after}`,
    );
  }
  if (fallback) {
    const retries = fallback.reply_attempts > 0 ? `, ${fallback.reply_attempts} failed reply attempt(s)` : '';
    lines.push(
      `${indent}fallback msg  chat ${fallback.chat_id}, message ${fallback.message_id}, sent ${iso(fallback.sent_at)}: ` +
        `${FALLBACK_STATE[fallback.state ?? ''] ?? fallback.state ?? '—'}${retries}`,
    );
  }
  if (source) {
    const pairs = Object.entries(source).map(([k, v]) => `${k}=${v}`);
    lines.push(`${indent}source        ${pairs.join(', ')}`);
  }
  if (consent) lines.push(`${indent}consent       accepted ${iso(consent.accepted_at)}, policy ${consent.policy_url}`);
  return lines;
}

/** The trace as lines a person reads in a terminal: the values as stored, each line made terminal-safe. */
export function formatTrace(trace: TraceResult): string {
  if (!trace.found) return terminalSafe(`${trace.key}: ${trace.message}`);
  const { lead } = trace;
  const lines = [
    `request ${trace.key}: ${trace.matched === 'repeat' ? `a repeat of lead #${lead.lead_number}` : `lead #${lead.lead_number}`}`,
    `  stored        ${iso(lead.created_at)} (request_id ${lead.request_id})`,
    ...requestLines(lead, '  '),
    `  status        ${lead.status}`,
    lead.published_at === null
      ? `  card          not published: ${lead.publish_attempts} attempt(s), last error: ${lead.last_error ?? '—'}, next attempt ${nextAttempt(lead)}`
      : `  card          published ${iso(lead.published_at)} in chat ${lead.chat_id}${lead.thread_id !== undefined ? `, topic ${lead.thread_id}` : ''}, message ${lead.message_id}${lead.card_format === 'plain' ? ' (plain text)' : ''} after ${lead.publish_attempts} failed attempt(s)`,
  ];
  if (lead.reminded_at !== null) lines.push(`  reminder      ${iso(lead.reminded_at)}`);
  if (lead.anonymised_at !== null) lines.push(`  anonymised    ${iso(lead.anonymised_at)}`);
  lines.push(`  repeats       ${trace.repeats.length}`);
  for (const r of trace.repeats) {
    lines.push(
      `    ${iso(r.created_at)} request_id ${r.request_id}, changed: ${r.changed_fields.join(', ') || 'nothing'}, ` +
        `notification: ${r.notify_outcome ?? `pending (${r.notify_attempts} failed attempt(s)${r.last_error ? `, last error: ${r.last_error}` : ''})`}`,
    );
    lines.push(...requestLines(r, '      '));
  }
  lines.push(`  status changes ${trace.status_history.length}`);
  for (const h of trace.status_history) lines.push(`    ${iso(h.at)} ${h.from} → ${h.to} by ${h.by} (${h.user_id})`);
  lines.push(`  events`);
  for (const e of trace.events)
    lines.push(
      `    ${iso(e.at)} ${e.kind}${e.repeat_request_id ? ` [repeat ${e.repeat_request_id}]` : ''}${e.detail ? `: ${e.detail}` : ''}`,
    );
  lines.push(`  messages      ${trace.messages.length}`);
  for (const m of trace.messages)
    lines.push(
      `    ${iso(m.at)} ${m.direction === 'in' ? 'visitor → team' : 'team → visitor'}, ${m.media ?? 'text'}: ${m.state}${m.error ? ` (${m.error})` : ''}`,
    );
  return lines.map(terminalSafe).join('\n');
}
