/** Text helpers for the field rules: lengths as a person counts them, and whitespace normalisation. */

const segmenter: { segment(s: string): Iterable<{ segment: string }> } | null =
  typeof Intl !== 'undefined' && 'Segmenter' in Intl ? new Intl.Segmenter(undefined, { granularity: 'grapheme' }) : null;

/**
 * Characters that are a grapheme each, one UTF-16 unit each, and never join the next one: printable ASCII, tab and
 * newline (not CR: CR LF is one grapheme), Latin-1 and Latin Extended-A/B, Cyrillic without its combining marks
 * (U+0483–U+0489), general punctuation but the zero-width and joining marks. Text made only of these (nearly every
 * name, username and comment the form gets) is counted by its length; anything else goes through the segmenter.
 */
const ONE_UNIT_GRAPHEMES = /^[\t\n\u0020-\u007E\u00A0-\u024F\u0400-\u0482\u048A-\u052F\u2010-\u2027\u2030-\u205E]*$/;

/** Lengths count characters as a person sees them, an emoji is one (docs/requirements.md §2.2). */
export function visibleLength(value: string): number {
  if (ONE_UNIT_GRAPHEMES.test(value)) return value.length;
  if (!segmenter) return Array.from(value).length;
  let n = 0;
  for (const _ of segmenter.segment(value)) n += 1;
  return n;
}

/** At most `max` characters as `visibleLength` counts them, the last one "…" when cut: never half an emoji. */
export function cutVisible(value: string, max: number): string {
  if (visibleLength(value) <= max) return value;
  const kept = segmenter ? Array.from(segmenter.segment(value), (s) => s.segment) : Array.from(value);
  return `${kept.slice(0, max - 1).join('')}…`;
}

// C0/C1 control characters except tab and newline: never typed on purpose, and they break the card and the logs.
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]/g;
// Every Default_Ignorable_Code_Point: zero-width and bidi marks, U+2060, U+061C, soft hyphen, Hangul fillers,
// variation selectors, tag characters. They are invisible, so they can only hide or spoof text.
const IGNORABLE = /\p{Default_Ignorable_Code_Point}/gu;
const PICTOGRAPHIC = /\p{Extended_Pictographic}/u;
const EMOJI_MODIFIER = /[\u{1F3FB}-\u{1F3FF}]/u;
const ZWJ = '\u200D';
const VS16 = '\uFE0F';
// The 66 noncharacters (U+FDD0–U+FDEF and the last two code points of every plane, U+FFFE, U+FFFF, U+1FFFE…): never
// text, and not allowed in XML, so one of them would break every picture or document that shows the value.
const NONCHARACTER = /\p{Noncharacter_Code_Point}/gu;
// A lone surrogate cannot be stored as UTF-8 or shown; it is dropped.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
/** At most this many combining marks in a row are kept; the rest are dropped (see `capCombiningMarks`). */
export const COMBINING_MARKS_MAX = 4;
const MARK_RUN = new RegExp(`(\\p{M}{${COMBINING_MARKS_MAX}})\\p{M}+`, 'gu');

/** The code point that ends just before `index` (a surrogate pair counts as one). */
function codePointBefore(s: string, index: number): string {
  if (index <= 0) return '';
  const low = s.charCodeAt(index - 1);
  return low >= 0xdc00 && low <= 0xdfff && index >= 2 ? s.slice(index - 2, index) : s.slice(index - 1, index);
}

/**
 * Two invisible characters are kept because emoji need them: U+FE0F right after an emoji (emoji presentation),
 * and U+200D between two emoji (a ZWJ sequence such as 👨‍👩‍👧; the first may carry a skin tone or U+FE0F).
 * Everywhere else they are dropped like every other default-ignorable character.
 */
function keepIgnorable(ch: string, index: number, s: string): boolean {
  if (ch === VS16) return PICTOGRAPHIC.test(codePointBefore(s, index));
  if (ch !== ZWJ) return false;
  let before = codePointBefore(s, index);
  if (before === VS16 || EMOJI_MODIFIER.test(before)) before = codePointBefore(s, index - before.length);
  const after = String.fromCodePoint(s.codePointAt(index + 1) ?? 0x20);
  return PICTOGRAPHIC.test(before) && PICTOGRAPHIC.test(after);
}

/**
 * One letter with thousands of accents ("Зa" + 7000 × U+0301) is one character as a person counts it; more than
 * `COMBINING_MARKS_MAX` marks in a row are dropped rather than the field refused, so that real writing (Vietnamese
 * tones, Hebrew points, Devanagari signs: up to three or four marks) is accepted unchanged and only the excess of
 * "zalgo" text goes.
 */
export function capCombiningMarks(value: string): string {
  return value.replace(MARK_RUN, '$1');
}

function clean(value: string): string {
  const visible = value
    .replace(LONE_SURROGATE, '')
    .replace(CONTROL, '')
    .replace(NONCHARACTER, '')
    .replace(IGNORABLE, (ch: string, index: number, s: string) => (keepIgnorable(ch, index, s) ? ch : ''));
  // Invisible characters go before NFC, so that what they separated can compose and a second pass changes nothing.
  // NFC runs again after the mark cap: a cut run may compose further, never grow.
  return capCombiningMarks(visible.normalize('NFC')).normalize('NFC');
}

/** A one-line field: invisible characters dropped, every run of whitespace one space, trimmed. */
export function normaliseLine(value: string): string {
  return clean(value).replace(/\s+/g, ' ').trim();
}

/** A multi-line field (the comment): line endings unified, trailing spaces cut, at most one blank line in a row. */
export function normaliseMultiline(value: string): string {
  return clean(value.replace(/\r\n?/g, '\n'))
    .replace(/\t/g, ' ')
    .split('\n')
    .map((line) => line.replace(/[^\S\n]+/g, ' ').trimEnd())
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

/** What was thrown, as one line of text for a log or an answer: an Error's message, anything else as a string. */
export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
