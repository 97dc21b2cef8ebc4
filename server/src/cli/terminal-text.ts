import { withoutPasswords } from '@stickers/shared';

/**
 * Characters a terminal acts on or that change how a line reads: C0 and C1 controls, format characters (bidi, zero
 * width, tags), line and paragraph separators, lone surrogates; a zero-width joiner between two emoji (👨‍👩‍👧) only joins them.
 */
const UNSAFE =
  /(?<!\p{Extended_Pictographic}(?:[\u{1F3FB}-\u{1F3FF}]|\uFE0F)?)\u200D|\u200D(?!\p{Extended_Pictographic})|(?!\u200D)[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}]/gu;

function escaped(ch: string): string {
  const code = ch.codePointAt(0)!;
  if (code <= 0xff) return `\\x${code.toString(16).toUpperCase().padStart(2, '0')}`;
  if (code <= 0xffff) return `\\u${code.toString(16).toUpperCase().padStart(4, '0')}`;
  return `\\u{${code.toString(16).toUpperCase()}}`;
}

/** A line with every UNSAFE character escaped (`\x1B`, `\u202E`): a chat title can neither drive the terminal nor fake a line. */
export function terminalSafe(line: string): string {
  return withoutPasswords(line).replace(UNSAFE, escaped);
}

/** `value` as JSON for a terminal: what JSON.stringify leaves (DEL, C1, format characters, separators) as `\uXXXX`. */
export function terminalSafeJson(value: unknown): string {
  const units = (ch: string) =>
    [...Array(ch.length).keys()].map((i) => `\\u${ch.charCodeAt(i).toString(16).toUpperCase().padStart(4, '0')}`).join('');
  return withoutPasswords(JSON.stringify(value, null, 2)).replace(/[\u007F-\u009F\p{Cf}\p{Zl}\p{Zp}]/gu, units);
}
