import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { cutVisible, visibleLength } from './text.js';

const segmenter = new Intl.Segmenter(undefined, { granularity: 'grapheme' });
const graphemes = (s: string) => [...segmenter.segment(s)].length;

/** Every code unit of the ranges counted by their length, and the neighbours just outside them. */
const FAST = [
  [0x09, 0x0a],
  [0x20, 0x7e],
  [0xa0, 0x24f],
  [0x400, 0x482],
  [0x48a, 0x52f],
  [0x2010, 0x2027],
  [0x2030, 0x205e],
];
const inFast = (c: number) => FAST.some(([a, b]) => c >= a && c <= b);
const unit = fc.oneof(
  fc.constantFrom(...FAST.flatMap(([a, b]) => [a, b, Math.floor((a + b) / 2)])),
  fc.integer({ min: 0x20, max: 0x52f }),
  fc.constantFrom(0x0d, 0x0301, 0x0483, 0x200d, 0xfe0f, 0x1100, 0x1161, 0x0e33),
);

describe('visibleLength', () => {
  it('counts as the grapheme segmenter does, whether the text takes the length shortcut or not', () => {
    fc.assert(
      fc.property(fc.array(unit, { maxLength: 40 }), (codes) => {
        const text = String.fromCharCode(...codes);
        expect(visibleLength(text)).toBe(graphemes(text));
      }),
      { numRuns: 2000 },
    );
  });

  it('takes the shortcut for Latin and Cyrillic text: every unit of it is a grapheme', () => {
    for (let c = 0; c <= 0x2100; c += 1) {
      if (!inFast(c)) continue;
      const text = `a${String.fromCharCode(c)}b`;
      expect(visibleLength(text)).toBe(graphemes(text));
    }
    expect(visibleLength('Анна Ким — стикеры к пятнице!')).toBe(29);
    expect(visibleLength('Зa\u0301\u0301')).toBe(2);
    expect(visibleLength('\r\n')).toBe(1);
    expect(visibleLength('👨‍👩‍👧 ок')).toBe(4);
  });
});

describe('cutVisible', () => {
  it('keeps a value of at most max characters; cuts a longer one to max - 1 and "…", never inside a grapheme', () => {
    expect(cutVisible('🎉'.repeat(40), 40)).toBe('🎉'.repeat(40));
    expect(cutVisible('🎉'.repeat(41), 40)).toBe(`${'🎉'.repeat(39)}…`);
    expect(cutVisible(`${'a'.repeat(38)}👨‍👩‍👧🎉🎉`, 40)).toBe(`${'a'.repeat(38)}👨‍👩‍👧…`);
    expect(cutVisible('Анна', 3)).toBe('Ан…');
  });
});
