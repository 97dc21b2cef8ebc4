/** Text helpers for the field rules: lengths as a person counts them, and whitespace normalisation. */

const segmenter: { segment(s: string): Iterable<unknown> } | null =
  typeof Intl !== 'undefined' && 'Segmenter' in Intl
    ? new Intl.Segmenter(undefined, { granularity: 'grapheme' })
    : null;

/** CONTRACT section 4: "Lengths count characters as a person sees them (an emoji is one)". */
export function visibleLength(value: string): number {
  if (!segmenter) return Array.from(value).length;
  let n = 0;
  for (const _ of segmenter.segment(value)) n += 1;
  return n;
}

// C0/C1 control characters except tab and newline, and the zero-width/bidi marks people never type on purpose.
const INVISIBLE = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F\u200B\u200E\u200F\u202A-\u202E\u2066-\u2069\uFEFF]/g;
// A lone surrogate cannot be stored as UTF-8 or shown; it is dropped.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

function clean(value: string): string {
  // Invisible characters go before NFC, so that what they separated can compose and a second pass changes nothing.
  return value.replace(LONE_SURROGATE, '').replace(INVISIBLE, '').normalize('NFC');
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
