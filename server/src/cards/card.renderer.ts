import type { LeadField } from '@stickers/shared';
import type { LeadStatus } from '../database/schema';
import { STATUS_BUTTONS, STATUS_LABEL, statusCallbackData } from './lead-statuses';

/** What a card shows of a lead. Personal fields are null once the lead is anonymised. */
export interface CardLead {
  id: number;
  name: string | null;
  telegram: string | null;
  phone: string | null;
  date: string | null;
  guests: string | null;
  comment: string | null;
  status: LeadStatus;
  created_at: number;
  anonymised_at: number | null;
  /** Who set the current status and when (absent while it is the initial "new"). */
  status_changed_by?: string | null;
  status_changed_at?: number | null;
}

export interface CardRepeat {
  created_at: number;
  changes: Partial<Record<LeadField, string>>;
}

export interface CardOptions {
  /** LEADS_CARD_PII: false hides name, username, phone and comment. */
  pii: boolean;
  timezone: string;
}

export interface InlineKeyboard {
  inline_keyboard: ({ text: string; callback_data: string } | { text: string; url: string })[][];
}

export interface Card {
  /** For parse_mode HTML; every value the visitor typed is escaped. */
  html: string;
  /** The same card without markup, for when Telegram refuses the HTML. */
  plain: string;
  keyboard: InlineKeyboard;
}

/** CONTRACT section 6: "up to 3 repeat blocks newest first". */
export const CARD_REPEATS = 3;
const PII_FIELDS: LeadField[] = ['name', 'telegram', 'phone', 'comment'];
const LABEL: Record<LeadField, string> = {
  name: 'Имя',
  telegram: 'Telegram',
  phone: 'Телефон',
  date: 'Дата',
  guests: 'Гостей',
  comment: 'Комментарий',
};
/** Telegram allows 4096 characters; these keep the longest possible card well inside it. */
const REPEAT_VALUE_MAX = 300;
const TEXT_MAX = 4000;

export function escapeHtml(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

export function formatTime(ms: number, timezone: string): string {
  return new Intl.DateTimeFormat('ru-RU', {
    timeZone: timezone,
    day: '2-digit',
    month: '2-digit',
    year: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
  })
    .format(new Date(ms))
    .replace(',', '');
}

function shorten(value: string, max: number): string {
  const chars = Array.from(value);
  return chars.length <= max ? value : `${chars.slice(0, max - 1).join('')}…`;
}

/** A card line: bold label plus a user value (escaped in HTML), or a fixed text. */
type Line = { label?: string; value?: string; text?: string; bold?: boolean };

function renderLines(lines: Line[], html: boolean): string {
  const esc = html ? escapeHtml : (s: string) => s;
  const b = (s: string) => (html ? `<b>${s}</b>` : s);
  return lines
    .map((l) => {
      if (l.text !== undefined) return l.bold ? b(esc(l.text)) : esc(l.text);
      const value = l.value ?? '';
      const multiline = value.includes('\n');
      return `${b(`${esc(l.label ?? '')}:`)}${multiline ? '\n' : ' '}${esc(value)}`;
    })
    .join('\n');
}

function fieldLines(values: Partial<Record<LeadField, string | null>>, pii: boolean, maxValue?: number): Line[] {
  const lines: Line[] = [];
  for (const field of ['name', 'telegram', 'phone', 'date', 'guests', 'comment'] as LeadField[]) {
    const value = values[field];
    if (!value || (!pii && PII_FIELDS.includes(field))) continue;
    lines.push({ label: LABEL[field], value: maxValue ? shorten(value, maxValue) : value });
  }
  return lines;
}

function statusLine(lead: CardLead, timezone: string): string {
  const who = lead.status_changed_by && lead.status_changed_at
    ? ` — ${lead.status_changed_by}, ${formatTime(lead.status_changed_at, timezone)}`
    : '';
  return `Статус: ${STATUS_LABEL[lead.status]}${who}`;
}

function buildLines(lead: CardLead, repeats: CardRepeat[], options: CardOptions, commentMax: number): Line[] {
  const lines: Line[] = [
    { text: `🆕 Заявка #${lead.id}`, bold: true },
    { text: `🕒 ${formatTime(lead.created_at, options.timezone)}` },
  ];
  if (lead.anonymised_at !== null) {
    lines.push({ text: '🗑 Личные данные удалены' });
  } else {
    lines.push(...fieldLines({ ...lead, comment: lead.comment ? shorten(lead.comment, commentMax) : null }, options.pii));
    if (!options.pii) lines.push({ text: '🔒 Контакты скрыты (LEADS_CARD_PII=0)' });
  }
  lines.push({ text: '' }, { text: statusLine(lead, options.timezone) });

  const newest = [...repeats].sort((a, b) => b.created_at - a.created_at);
  for (const repeat of newest.slice(0, CARD_REPEATS)) {
    lines.push({ text: '' }, { text: `🔁 Повторное обращение: ${formatTime(repeat.created_at, options.timezone)}`, bold: true });
    if (lead.anonymised_at !== null) continue;
    const shown = fieldLines(repeat.changes, options.pii, REPEAT_VALUE_MAX);
    const hiddenChanged = !options.pii && PII_FIELDS.some((f) => repeat.changes[f]);
    if (shown.length > 0) lines.push(...shown);
    if (hiddenChanged) lines.push({ text: 'Изменились контакты (скрыты)' });
    if (shown.length === 0 && !hiddenChanged) lines.push({ text: 'Те же данные' });
  }
  if (newest.length > CARD_REPEATS) lines.push({ text: `…и ещё повторных: ${newest.length - CARD_REPEATS}` });
  return lines;
}

/** The card of CONTRACT section 6: header, fields, status line, up to 3 repeat blocks, status buttons. */
export function renderCard(lead: CardLead, repeats: CardRepeat[], options: CardOptions): Card {
  let commentMax = 1200;
  let lines = buildLines(lead, repeats, options, commentMax);
  // A card near Telegram's limit gives up comment length first.
  while (renderLines(lines, false).length > TEXT_MAX && commentMax > 100) {
    commentMax -= 200;
    lines = buildLines(lead, repeats, options, commentMax);
  }
  // An anonymised lead keeps its card for the record but has no buttons: nothing about it changes any more.
  const buttons: InlineKeyboard['inline_keyboard'] =
    lead.anonymised_at === null
      ? [STATUS_BUTTONS[lead.status].map((b) => ({ text: b.text, callback_data: statusCallbackData(lead.id, lead.status, b.to) }))]
      : [];
  if (options.pii && lead.anonymised_at === null && lead.telegram) {
    buttons.push([{ text: `✈️ Написать ${lead.telegram}`, url: `https://t.me/${lead.telegram.slice(1)}` }]);
  }
  return { html: renderLines(lines, true), plain: renderLines(lines, false), keyboard: { inline_keyboard: buttons } };
}
