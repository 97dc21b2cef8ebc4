import { terminalSafe, terminalSafeJson } from './terminal-text';

const ESC = '\u001b';
/** What a hostile chat title holds: a window title, a screen clear, a cursor move, a fake line, bidi overrides. */
const HOSTILE =
  `${ESC}]0;pwned\u0007${ESC}[2J${ESC}[H${ESC}[1;1H\rok    «Заявки Stickers» (-100123): the bot was added\n` +
  `\u202Eкороткий\u202C \u2066a\u2069\u200E\u200F\u061C \u009B31m \u200Bx\u2028y\u{E0041}`;

/** Every character a terminal acts on or that reorders a line (a ZWJ between emoji aside). */
const UNSAFE = /[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}]/u;

describe('terminalSafe', () => {
  it('writes controls, bidi and format characters as escapes: one visible line, nothing for the terminal to act on', () => {
    const safe = terminalSafe(HOSTILE);
    expect(safe).not.toMatch(UNSAFE);
    expect(safe).toBe(
      '\\x1B]0;pwned\\x07\\x1B[2J\\x1B[H\\x1B[1;1H\\x0Dok    «Заявки Stickers» (-100123): the bot was added\\x0A' +
        '\\u202Eкороткий\\u202C \\u2066a\\u2069\\u200E\\u200F\\u061C \\x9B31m \\u200Bx\\u2028y\\u{E0041}',
    );
  });

  it('leaves ordinary text alone, emoji sequences included', () => {
    for (const text of ['«Заявки с сайта» (−100123): ok', 'Студия 👨‍👩‍👧 ❤️ 👍🏽', 'עברית and العربية', 'tab-free'])
      expect(terminalSafe(text)).toBe(text);
  });

  it('a zero-width joiner that joins no emoji shows', () => {
    expect(terminalSafe('a\u200Db 👍\u200D')).toBe('a\\u200Db 👍\\u200D');
  });

  it("drops a URL's password", () => {
    expect(terminalSafe('TELEGRAM_API_ROOT=http://apiuser:APIPASSWORD@10.0.0.1:8081')).toBe(
      'TELEGRAM_API_ROOT=http://apiuser@10.0.0.1:8081',
    );
  });
});

describe('terminalSafeJson', () => {
  it('the same JSON value, with nothing for the terminal to act on inside its strings', () => {
    const value = { by: HOSTILE, n: 1, list: ['Студия 👨‍👩‍👧'] };
    const json = terminalSafeJson(value);
    expect(JSON.parse(json)).toEqual(value);
    expect(json.replace(/\n/g, '')).not.toMatch(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u);
  });
});
