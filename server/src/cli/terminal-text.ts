import { withoutPasswords } from '@stickers/shared';

/**
 * Characters a terminal acts on or that change how a line reads: C0 and C1 controls (ESC starts the sequences that
 * set the window's title, clear the screen or move the cursor; CR and LF start a line of their own), format
 * characters (bidi overrides and isolates, zero-width characters, tag characters), line and paragraph separators,
 * lone surrogates. A zero-width joiner between two emoji (👨‍👩‍👧) is kept: it only joins them.
 */
const UNSAFE =
  /(?<!\p{Extended_Pictographic}(?:[\u{1F3FB}-\u{1F3FF}]|\uFE0F)?)\u200D|\u200D(?!\p{Extended_Pictographic})|(?!\u200D)[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}]/gu;

function escaped(ch: string): string {
  const code = ch.codePointAt(0)!;
  if (code <= 0xff) return `\\x${code.toString(16).toUpperCase().padStart(2, '0')}`;
  if (code <= 0xffff) return `\\u${code.toString(16).toUpperCase().padStart(4, '0')}`;
  return `\\u{${code.toString(16).toUpperCase()}}`;
}

/**
 * A line as the operator's terminal may show it: every character of UNSAFE is written as its escape (`\x1B`,
 * `\u202E`), so that a chat title or a user name from Telegram can neither drive the terminal nor pass for another
 * line, and what was hidden in it shows. URLs lose their password (`withoutPasswords`). Every line the CLI prints
 * goes through it.
 */
export function terminalSafe(line: string): string {
  return withoutPasswords(line).replace(UNSAFE, escaped);
}

/**
 * `value` as JSON for a terminal: the same JSON (a reader parses the same values), with every character a terminal
 * acts on inside a string written as its `\uXXXX` escape. JSON.stringify escapes C0 controls and lone surrogates
 * itself; DEL, the C1 controls (U+009B starts a sequence as ESC [ does), format characters and separators are left to
 * this. Passwords of URLs go too.
 */
export function terminalSafeJson(value: unknown): string {
  const units = (ch: string) =>
    [...Array(ch.length).keys()].map((i) => `\\u${ch.charCodeAt(i).toString(16).toUpperCase().padStart(4, '0')}`).join('');
  return withoutPasswords(JSON.stringify(value, null, 2)).replace(/[\u007F-\u009F\p{Cf}\p{Zl}\p{Zp}]/gu, units);
}
