import { formatPhone, LEAD_FIELDS, type LeadField, sourceSummary } from '@stickers/shared';
import type { Lead } from '../domain/lead';
import { accountName, type TelegramAccount } from '../domain/telegram-account';
import { isPersonalField, isPersonalSourceKey } from '../domain/personal-fields';
import { formatClock, formatDay, formatTime, type Messages } from '../i18n';
import { TELEGRAM_TEXT_MAX, type InlineKeyboard } from '../telegram/telegram.gateway';
import { statusButtons as buttonsOf, statusCallbackData } from './lead-statuses';

const NAMED: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"' };
const TAG_OR_ENTITY = /<[^>]*>|&(lt|gt|amp|quot|#\d{1,7}|#x[0-9a-fA-F]{1,6});/g;

/** What Telegram measures against TELEGRAM_TEXT_MAX: UTF-16 units of the HTML text, tags removed, entities decoded. */
export function telegramTextLength(html: string): number {
  const text = html.replace(TAG_OR_ENTITY, (match: string, entity: string | undefined) => {
    if (entity === undefined) return '';
    if (NAMED[entity] !== undefined) return NAMED[entity];
    const code = entity[1] === 'x' ? parseInt(entity.slice(2), 16) : parseInt(entity.slice(1), 10);
    return code <= 0x10ffff ? String.fromCodePoint(code) : match;
  });
  return text.length;
}

/** What a card shows of a lead; the optional part may be left out (tests, the minimal card). */
export type CardLead = Pick<Lead, 'id' | LeadField | 'status' | 'created_at' | 'anonymised_at'> &
  Partial<Lead> & {
    /** The Telegram account the visitor bound by opening the lead's "Continue in Telegram" link. */
    telegram_account?: TelegramAccount | null;
    /** The conversation with that visitor cannot go on: they blocked the bot, or sent `/stop`. */
    telegram_conversation?: 'blocked' | 'stopped' | null;
  };

export interface CardRepeat {
  created_at: number;
  changes: Partial<Record<LeadField, string>>;
}

interface CardOptions {
  /** LEADS_CARD_PII: false hides every personal field (domain/personal-fields.ts). */
  pii: boolean;
  timezone: string;
  messages: Messages;
}

export interface Card {
  /** For parse_mode HTML, every value escaped; `plain` for when Telegram refuses the HTML. */
  html: string;
  plain: string;
  keyboard: InlineKeyboard;
}

/** Repeat blocks, newest first (§4.8). */
const CARD_REPEATS = 3;
/** A repeat block is a summary: its values are cut here even when the card has room (UTF-16 units). */
const REPEAT_VALUE_MAX = 300;
/** The manager's name on the status line comes from Telegram; it is cut here (UTF-16 units). */
const WHO_MAX = 64;
/** Every line of a multi-line value starts with it: a visitor's line cannot pass for the card's own status line. */
export const QUOTE_BAR = '│';
const TELEGRAM_USERNAME = /^@[A-Za-z][A-Za-z0-9_]{4,31}$/;
const LINE_BREAK = /\r\n|[\n\r\v\f\u0085\u2028\u2029]/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

function escapeHtml(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** The time alone when `ms` falls on the same local day as `day`, else the whole date and time. */
function timeAfter(ms: number, day: number, options: CardOptions): string {
  const { timezone, messages } = options;
  const sameDay = formatDay(ms, timezone, messages.intl) === formatDay(day, timezone, messages.intl);
  return sameDay ? formatClock(ms, timezone, messages.intl) : formatTime(ms, timezone, messages.intl);
}

/** A late lead went through the landing's fallback message, or reached the database only later. */
function lateLines(lead: CardLead, options: CardOptions): Line[] {
  const card = options.messages.card;
  if (lead.fallback_sent_at != null) return [[{ text: card.viaFallback(timeAfter(lead.fallback_sent_at, lead.created_at, options)) }]];
  if (lead.late_route == null || lead.received_at == null) return [];
  return [[{ text: card.late(timeAfter(lead.received_at, lead.created_at, options)) }]];
}

/** The account bound through the lead's link (warned when not the username typed), then whether the conversation ended. */
function telegramLines(lead: CardLead, options: CardOptions): Line[] {
  const account = lead.telegram_account;
  if (!account || lead.anonymised_at !== null) return [];
  const card = options.messages.card;
  const line: Line = [{ text: options.pii ? card.telegramBound(accountName(account)) : card.telegramBoundHidden }];
  const typed = lead.telegram;
  if (options.pii && typed && (!account.username || `@${account.username}`.toLowerCase() !== typed.toLowerCase())) {
    line.push({ text: ` ${card.telegramDiffers(typed)}`, bold: true });
  }
  const conversation = lead.telegram_conversation;
  const ended = conversation === 'blocked' ? card.telegramBlocked : conversation === 'stopped' ? card.telegramStopped : null;
  return ended ? [line, [{ text: ended }]] : [line];
}

/** The source line's parts are short already (≤ 64 characters each); the line is cut here (UTF-16 units). */
const SOURCE_MAX = 200;

/** `📣 wedding · yandex / cpc / summer`; the UTM values are personal (the page URL's free text), the landing is not. */
function sourceLine(draft: Draft, lead: CardLead, pii: boolean): Line[] {
  const shown = (key: 'utm_source' | 'utm_medium' | 'utm_campaign') =>
    (pii && lead.anonymised_at === null) || !isPersonalSourceKey(key) ? (lead[key] ?? undefined) : undefined;
  const summary = sourceSummary({
    landing: lead.source_landing ?? undefined,
    utm_source: shown('utm_source'),
    utm_medium: shown('utm_medium'),
    utm_campaign: shown('utm_campaign'),
  });
  if (summary === null) return [];
  return [[{ text: '📣 ' }, { slot: addValue(draft, summary.split(LINE_BREAK).join(' '), SOURCE_MAX) }]];
}

const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

/** At most `max` UTF-16 code units, cut between graphemes and ended with "…" when cut; `max` ≤ 0: empty. */
export function shorten(value: string, max: number): string {
  if (value.length <= max) return value;
  if (max <= 0) return '';
  let end = 0;
  for (const { index, segment } of graphemes.segment(value)) {
    if (index + segment.length > max - 1) break;
    end = index + segment.length;
  }
  return `${value.slice(0, end).trimEnd()}…`;
}

/** Fixed text, or the value in slot `slot`, shortened to what the card has room for. */
type Segment = { text: string; bold?: boolean } | { slot: number; bold?: boolean };
type Line = Segment[];

/** The card before it is fitted: its lines, their values and each value's cap. */
interface Draft {
  lines: Line[];
  values: string[];
  caps: number[];
}

function addValue(draft: Draft, value: string, cap: number): number {
  draft.values.push(value.replace(LONE_SURROGATE, '\uFFFD'));
  draft.caps.push(cap);
  return draft.values.length - 1;
}

/** `Label: value`, or for a multi-line value the label alone and the value below it, each line behind the bar. */
function fieldLine(draft: Draft, label: string, value: string, cap: number): Line {
  const lines = value.split(LINE_BREAK);
  const quoted = lines.length === 1 ? value : lines.map((l) => (l === '' ? QUOTE_BAR : `${QUOTE_BAR} ${l}`)).join('\n');
  return [{ text: `${label}:`, bold: true }, { text: lines.length === 1 ? ' ' : '\n' }, { slot: addValue(draft, quoted, cap) }];
}

function fieldLines(draft: Draft, values: Partial<Record<LeadField, unknown>>, options: CardOptions, cap: number): Line[] {
  const { pii, messages } = options;
  const lines: Line[] = [];
  for (const field of LEAD_FIELDS) {
    const value = values[field];
    if (typeof value !== 'string' || value === '' || (!pii && isPersonalField(field))) continue;
    // The phone as people write it (+7 916 555-12-34 → +7 916 555 12 34), the inbox's way; Telegram still makes it a link.
    lines.push(fieldLine(draft, messages.card.fields[field], field === 'phone' ? formatPhone(value) : value, cap));
  }
  return lines;
}

function statusLine(draft: Draft, lead: CardLead, options: Pick<CardOptions, 'timezone' | 'messages'>): Line {
  const { timezone, messages } = options;
  const line: Line = [{ text: messages.card.status(messages.statuses[lead.status]), bold: true }];
  if (lead.status_changed_by && lead.status_changed_at) {
    const who = lead.status_changed_by.split(LINE_BREAK).join(' ');
    line.push({ text: ' — ', bold: true }, { slot: addValue(draft, who, WHO_MAX), bold: true });
    line.push({ text: `, ${formatTime(lead.status_changed_at, timezone, messages.intl)}`, bold: true });
  }
  return line;
}

function repeatBlock(draft: Draft, lead: CardLead, repeat: CardRepeat, options: CardOptions): Line[] {
  const card = options.messages.card;
  const lines: Line[] = [[], [{ text: card.repeat(formatTime(repeat.created_at, options.timezone, options.messages.intl)), bold: true }]];
  if (lead.anonymised_at !== null) return lines;
  const changes = repeat.changes;
  const shown = fieldLines(draft, changes, options, REPEAT_VALUE_MAX);
  const hiddenChanged = !options.pii && LEAD_FIELDS.some((f) => isPersonalField(f) && changes[f]);
  lines.push(...shown);
  if (hiddenChanged) lines.push([{ text: card.repeatHidden }]);
  if (shown.length === 0 && !hiddenChanged) lines.push([{ text: card.repeatSame }]);
  // A different phone means only the username matched, which anyone who knows a public @username can send.
  if (changes.phone) lines.push([{ text: card.repeatByUsername, bold: true }]);
  if (changes.telegram) lines.push([{ text: card.repeatByPhone, bold: true }]);
  return lines;
}

function draftCard(lead: CardLead, newest: CardRepeat[], shown: number, options: CardOptions): Draft {
  const draft: Draft = { lines: [], values: [], caps: [] };
  const lines = draft.lines;
  const card = options.messages.card;
  lines.push(
    [{ text: card.title(lead.id), bold: true }],
    [{ text: `🕒 ${formatTime(lead.created_at, options.timezone, options.messages.intl)}` }],
    ...lateLines(lead, options),
  );
  if (lead.captcha === 'unchecked') lines.push([{ text: card.captchaUnchecked }]);
  lines.push(...sourceLine(draft, lead, options.pii));
  if (lead.anonymised_at !== null) {
    lines.push([{ text: card.erased }]);
  } else {
    lines.push(...fieldLines(draft, lead, options, Infinity));
    if (!options.pii) lines.push([{ text: card.piiHidden }]);
  }
  // Kept on an erased card: not personal.
  if (lead.consent_accepted_at != null) lines.push([{ text: card.consent(timeAfter(lead.consent_accepted_at, lead.created_at, options)) }]);
  lines.push(...telegramLines(lead, options));
  lines.push([], statusLine(draft, lead, options));
  for (const repeat of newest.slice(0, shown)) lines.push(...repeatBlock(draft, lead, repeat, options));
  if (newest.length > shown) lines.push([{ text: card.moreRepeats(newest.length - shown) }]);
  return draft;
}

function renderLines(draft: Draft, caps: number[], html: boolean): string {
  const esc = html ? escapeHtml : (s: string) => s;
  const renderLine = (line: Line) => {
    // Neighbouring bold pieces share one <b>, so the status line is one bold run, not four.
    const runs: { bold: boolean; text: string }[] = [];
    for (const seg of line) {
      const text = esc('slot' in seg ? shorten(draft.values[seg.slot], caps[seg.slot]) : seg.text);
      const bold = seg.bold === true;
      if (runs.length > 0 && runs[runs.length - 1].bold === bold) runs[runs.length - 1].text += text;
      else runs.push({ bold, text });
    }
    return runs.map((r) => (html && r.bold && r.text !== '' ? `<b>${r.text}</b>` : r.text)).join('');
  };
  return draft.lines.map(renderLine).join('\n');
}

/** The largest common cap keeping the values within `budget` (water-filling: the longest are cut to one length). */
function fairCap(lengths: number[], budget: number): number | null {
  if (budget < 0) return null;
  const total = (cap: number) => lengths.reduce((sum, n) => sum + Math.min(n, cap), 0);
  let low = 0;
  let high = Math.max(0, ...lengths);
  if (total(high) <= budget) return high;
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    if (total(mid) <= budget) low = mid;
    else high = mid - 1;
  }
  return low;
}

/** The card's text fitted to `max` units, or null when even empty values leave it too long. */
function fit(draft: Draft, max: number): { html: string; plain: string } | null {
  const fixed = renderLines(draft, new Array<number>(draft.caps.length).fill(0), false).length;
  const lengths = draft.values.map((v, i) => Math.min(v.length, draft.caps[i]));
  const cap = fairCap(lengths, max - fixed);
  if (cap === null) return null;
  const caps = lengths.map((n) => Math.min(n, cap));
  const html = renderLines(draft, caps, true);
  const plain = renderLines(draft, caps, false);
  // Measured again the way Telegram measures, so that the guarantee does not rest on the arithmetic above.
  return telegramTextLength(html) <= max && plain.length <= max ? { html, plain } : null;
}

/** The card (§4.8–§4.9) in ≤ `max` units: the longest values shorten first, then older repeats, then the minimal card. */
export function renderCard(lead: CardLead, repeats: CardRepeat[], options: CardOptions, max = TELEGRAM_TEXT_MAX): Card {
  const newest = [...repeats].sort((a, b) => b.created_at - a.created_at);
  let text: { html: string; plain: string } | null = null;
  for (let shown = Math.min(CARD_REPEATS, newest.length); shown >= 0 && !text; shown -= 1) {
    text = fit(draftCard(lead, newest, shown, options), max);
  }
  if (!text) return renderMinimalCard(lead, options);
  const buttons = statusButtons(lead, options.messages);
  if (options.pii && lead.anonymised_at === null && lead.telegram && TELEGRAM_USERNAME.test(lead.telegram)) {
    buttons.push([{ text: options.messages.card.writeTo(lead.telegram), url: `https://t.me/${lead.telegram.slice(1)}` }]);
  }
  return { ...text, keyboard: { inline_keyboard: buttons } };
}

/** An anonymised lead keeps its card for the record but has no buttons: nothing about it changes any more. */
function statusButtons(lead: CardLead, messages: Messages): InlineKeyboard['inline_keyboard'] {
  if (lead.anonymised_at !== null) return [];
  return [buttonsOf(messages, lead.status).map((b) => ({ text: b.text, callback_data: statusCallbackData(lead.id, lead.status, b.to) }))];
}

/** When Telegram refuses the full card as too long: number, status line, status buttons, a note; nothing personal. */
export function renderMinimalCard(lead: CardLead, options: Pick<CardOptions, 'timezone' | 'messages'>): Card {
  const draft: Draft = { lines: [], values: [], caps: [] };
  draft.lines.push([{ text: options.messages.card.title(lead.id), bold: true }], statusLine(draft, lead, options), [
    { text: `⚠️ ${options.messages.card.minimalNote}` },
  ]);
  return { ...fit(draft, Infinity)!, keyboard: { inline_keyboard: statusButtons(lead, options.messages) } };
}
