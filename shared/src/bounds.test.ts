import { describe, expect, it } from 'vitest';
import { LEAD_FIELDS } from './fields.js';
import {
  FIELD_UNITS_MAX,
  checkComment,
  checkDate,
  checkGuests,
  checkName,
  checkPhone,
  checkTelegram,
  validateLeadFields,
} from './fields.js';
import { COMMENT_MAX, DATE_MAX, GUESTS_MAX, NAME_MAX } from './limits.js';
import { COMBINING_MARKS_MAX, capCombiningMarks, normaliseLine, normaliseMultiline, visibleLength } from './text.js';
import { checkSource } from './source.js';

const ACUTE = '\u0301';
const THUMB = '👍🏽'; // one character, four code units
const ASTRONAUT = '🧑🏽‍🚀'; // one character, seven code units

describe('red-team input: one letter with thousands of combining marks', () => {
  it('"Зa" + 7000 × U+0301 is normalised to two short characters, so the field stays small', () => {
    const result = checkName('Зa' + ACUTE.repeat(7000));
    expect(result).toEqual({ ok: true, value: 'Зá' + ACUTE.repeat(COMBINING_MARKS_MAX) });
    if (result.ok) expect(result.value.length).toBeLessThanOrEqual(2 + 1 + COMBINING_MARKS_MAX);
  });
  it.each([
    ['date', checkDate],
    ['guests', checkGuests],
    ['comment', checkComment],
  ] as const)('the same in %s', (_field, check) => {
    expect(check('x' + ACUTE.repeat(7000))).toEqual({ ok: true, value: 'x' + ACUTE.repeat(COMBINING_MARKS_MAX) });
  });
});

describe('combining marks', () => {
  it(`keeps up to ${COMBINING_MARKS_MAX} marks in a row and drops the rest`, () => {
    expect(capCombiningMarks('a\u0301\u0302\u0303\u0304')).toBe('a\u0301\u0302\u0303\u0304');
    expect(capCombiningMarks('a\u0301\u0302\u0303\u0304\u0305\u0306b\u0301')).toBe('a\u0301\u0302\u0303\u0304b\u0301');
  });
  it('leaves real text alone: Vietnamese, Hindi, Russian stress marks', () => {
    for (const word of ['Nguyễn Thị Hồng', 'क्षत्रिय', 'Ве\u0301ра']) expect(normaliseLine(word)).toBe(word.normalize('NFC'));
  });
  it('a mark that NFC splits in two does not break idempotence', () => {
    const s = 'a' + '\u0344'.repeat(5);
    expect(normaliseLine(normaliseLine(s))).toBe(normaliseLine(s));
  });
});

describe('invisible characters (every Default_Ignorable_Code_Point) are dropped in every field', () => {
  const invisible = [
    ...['\u2060', '\u061C', '\u00AD', '\u{E0041}', '\u{E007F}', '\u200B', '\u200C', '\u200E'],
    ...['\u202E', '\u2066', '\uFEFF', '\u3164', '\u034F', '\u180E', '\uFE00'],
  ];
  it.each(invisible.map((ch) => [ch.codePointAt(0)!.toString(16).toUpperCase(), ch]))('U+%s', (_hex, ch) => {
    expect(checkName(`Ан${ch}на`)).toEqual({ ok: true, value: 'Анна' });
    expect(checkTelegram(`@anna${ch}_k`)).toEqual({ ok: true, value: '@anna_k' });
    expect(checkPhone(`+7999${ch}1234567`)).toEqual({ ok: true, value: '+79991234567' });
    expect(checkDate(`14${ch} февраля`)).toEqual({ ok: true, value: '14 февраля' });
    expect(checkGuests(`3${ch}0`)).toEqual({ ok: true, value: '30' });
    expect(checkComment(`раз${ch}\nдва`)).toEqual({ ok: true, value: 'раз\nдва' });
  });
  it('ZWJ stays only between two emoji; U+FE0F stays only right after an emoji', () => {
    for (const emoji of ['👨‍👩‍👧', '🏳️‍🌈', '🧑🏽‍🚀', '❤️‍🔥', '❤️']) expect(normaliseLine(`a ${emoji} b`)).toBe(`a ${emoji} b`);
    expect(normaliseLine('a\u200Db')).toBe('ab');
    expect(normaliseLine('😀\u200D')).toBe('😀');
    expect(normaliseLine('\u200D😀')).toBe('😀');
    expect(normaliseLine('😀\u2060\u200D😀')).toBe('😀😀');
    expect(normaliseLine('a\uFE0F')).toBe('a');
    expect(normaliseMultiline('1\uFE0F\u20E3')).toBe('1\u20E3');
    // A subdivision flag is built from tag characters: it becomes the plain black flag.
    expect(normaliseLine('🏴\u{E0067}\u{E0062}\u{E0065}\u{E006E}\u{E0067}\u{E007F}')).toBe('🏴');
  });
});

describe('UTF-16 code unit bounds', () => {
  it('every field has one, and a lead with every field at its bounds fits one Telegram message', () => {
    expect(Object.keys(FIELD_UNITS_MAX).sort()).toEqual([...LEAD_FIELDS].sort());
    const labels = 'Заявка с сайта\nИмя: \nTelegram: \nТелефон: \nДата: \nГостей: \nКомментарий: '.length;
    const sum = Object.values(FIELD_UNITS_MAX).reduce((a, b) => a + b, 0);
    expect(sum + labels + 200).toBeLessThanOrEqual(4096);
  });
  it.each([
    ['name', checkName, NAME_MAX],
    ['date', checkDate, DATE_MAX],
    ['guests', checkGuests, GUESTS_MAX],
  ] as const)('%s: at most 4 units per character; more is too_long even within the character bound', (field, check, max) => {
    expect(FIELD_UNITS_MAX[field]).toBe(4 * max);
    const atBound = THUMB.repeat(max);
    expect(check(atBound)).toEqual({ ok: true, value: atBound });
    const over = THUMB.repeat(max - 1) + ASTRONAUT;
    expect(visibleLength(over)).toBe(max);
    expect(check(over)).toEqual({ ok: false, code: 'too_long' });
  });
  it('comment: at most 2 units per character (1200 simple emoji fit)', () => {
    expect(FIELD_UNITS_MAX.comment).toBe(2 * COMMENT_MAX);
    const atBound = '😀'.repeat(COMMENT_MAX);
    expect(checkComment(atBound)).toEqual({ ok: true, value: atBound });
    const over = '😀'.repeat(COMMENT_MAX - 1) + THUMB;
    expect(visibleLength(over)).toBe(COMMENT_MAX);
    expect(checkComment(over)).toEqual({ ok: false, code: 'too_long' });
  });
  it('one giant character (a ZWJ chain of emoji) is too_long, not accepted as a two-character name', () => {
    const chain = Array.from({ length: 200 }, () => '👨').join('\u200D'); // 599 units
    expect(visibleLength(chain)).toBe(1);
    expect(checkName(`a${chain}`)).toEqual({ ok: false, code: 'too_long' });
    expect(validateLeadFields({ name: 'Анна', telegram: '@anna_k', phone: '+79991234567', comment: chain.repeat(20) })).toMatchObject({
      ok: false,
      errors: { comment: 'too_long' },
    });
  });
});

describe('noncharacters (all 66) are dropped in every field and in the source', () => {
  const noncharacters = [
    ...Array.from({ length: 0x20 }, (_, i) => 0xfdd0 + i),
    ...Array.from({ length: 17 }, (_, plane) => [plane * 0x10000 + 0xfffe, plane * 0x10000 + 0xffff]).flat(),
  ].map((cp) => String.fromCodePoint(cp));

  it('there are 66 of them, and each is one', () => {
    expect(noncharacters).toHaveLength(66);
    for (const ch of noncharacters) expect(ch).toMatch(/^\p{Noncharacter_Code_Point}$/u);
  });
  it.each(noncharacters.map((ch) => [ch.codePointAt(0)!.toString(16).toUpperCase(), ch]))('U+%s', (_hex, ch) => {
    expect(normaliseLine(`wed${ch}ding`)).toBe('wedding');
    expect(normaliseMultiline(`раз${ch}\nдва${ch}`)).toBe('раз\nдва');
    expect(checkName(`Ан${ch}на`)).toEqual({ ok: true, value: 'Анна' });
    expect(checkComment(`${ch}раз`)).toEqual({ ok: true, value: 'раз' });
    expect(checkSource({ landing: `wedding${ch}`, utm_campaign: `${ch}summer` })).toEqual({
      ok: true,
      value: { landing: 'wedding', utm_campaign: 'summer' },
    });
  });
  it('a value of noncharacters alone is missing', () => {
    expect(normaliseLine(noncharacters.join(''))).toBe('');
    expect(checkSource({ landing: '\uFFFE\uFFFF' })).toEqual({ ok: true, value: undefined });
  });
});
