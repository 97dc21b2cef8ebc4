import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LEAD_FIELDS } from './fields.js';
import { FIELD_UNITS_MAX, validateLeadFields, validateSubmission } from './fields.js';
import { COMBINING_MARKS_MAX, normaliseLine, normaliseMultiline } from './text.js';

const RUNS = 2000;

// Strings that look like what people type, with the characters that make normalisation hard.
const tricky = fc.string({
  unit: fc.oneof(
    fc.constantFrom(
      ' ',
      '\t',
      '\n',
      '\r',
      '\u00A0',
      '\u200B',
      '\u0301',
      'e',
      '@',
      '+',
      '-',
      '(',
      ')',
      '/',
      '.',
      ':',
      '_',
      '7',
      '😀',
      '\uD83D',
      'Я',
      't',
    ),
    fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
  ),
  maxLength: 90,
});

// What a hostile visitor sends: huge combining sequences, ZWJ chains, variation selectors, tag characters,
// bidi and other invisible marks, lone surrogates, markup characters.
const hostileUnit = fc.oneof(
  fc.constantFrom('\u0301', '\u0344', '\u20E3', '\u200D', '\uFE0F', '\u2060', '\u061C', '\u00AD', '\u202E', '\u200F', '\u3164'),
  fc.constantFrom('\u{E0041}', '\u{E007F}', '\uD83D', '\uDE00', '<', '>', '&', '"', '\n', ' ', '😀', '👨', '🏽', '❤', 'Я', 'a', '1'),
  fc.integer({ min: 0, max: 0x10ffff }).map((cp) => String.fromCodePoint(cp)),
);
const hostile = fc.oneof(
  fc.string({ unit: hostileUnit, maxLength: 400 }),
  fc
    .tuple(fc.string({ unit: hostileUnit, maxLength: 3 }), fc.constantFrom('\u0301', '\u200D😀', '\uFE0F', '\u{E0041}'), fc.nat(3000))
    .map(([head, unit, n]) => head + unit.repeat(n)),
);

const fieldValue = fc.oneof(tricky, hostile, fc.jsonValue(), fc.constant(undefined));
/** Mostly plausible values (so the accepting branch is reached), sometimes anything at all. */
const mostly = <T>(plausible: fc.Arbitrary<T>) => fc.oneof({ arbitrary: plausible, weight: 4 }, { arbitrary: fieldValue, weight: 1 });
const body = fc.record({
  request_id: mostly(fc.uuid({ version: 4 })),
  name: mostly(fc.string({ unit: 'grapheme', minLength: 2, maxLength: 40 })),
  telegram: mostly(fc.stringMatching(/^(@|t\.me\/|https:\/\/t\.me\/)?[A-Za-z][A-Za-z0-9_]{4,31}$/)),
  phone: mostly(
    fc.oneof(
      fc.stringMatching(/^\+[1-9]( ?\(?\d{2,3}\)?)?[\d -]{6,12}$/),
      // Russian mobiles as people type them: 8 or +7 or 007 or nothing, then 9xx and seven digits, any separators.
      fc
        .tuple(
          fc.constantFrom('8', '+7', '007', '', '8 ', '+7 '),
          fc.stringMatching(/^9\d\d$/),
          fc.stringMatching(/^\d{7}$/),
          fc.constantFrom(' ', '-', '.', ''),
        )
        .map(([prefix, code, rest, sep]) => `${prefix}(${code}) ${rest.slice(0, 3)}${sep}${rest.slice(3, 5)}${sep}${rest.slice(5)}`),
    ),
  ),
  date: mostly(tricky),
  guests: mostly(fc.string({ maxLength: 40 })),
  comment: mostly(tricky),
  client_ip: mostly(fc.oneof(fc.ipV4(), fc.ipV6())),
});

// Each property runs thousands of cases on the CPU, beside the server's suites: the bound catches a hang, not slowness.
describe('field rules (properties)', { timeout: 60_000 }, () => {
  it('normalising never throws on any JSON value, and only names known fields', () => {
    fc.assert(
      fc.property(fc.oneof(body, fc.dictionary(fc.string(), fc.jsonValue())), (input) => {
        const result = validateSubmission(input);
        if (!result.ok) {
          for (const field of Object.keys(result.errors)) {
            expect([...LEAD_FIELDS, 'request_id', 'client_ip']).toContain(field);
          }
        }
      }),
      { numRuns: RUNS },
    );
  });

  it('is idempotent: an accepted value is accepted again unchanged', () => {
    let accepted = 0;
    fc.assert(
      fc.property(body, (input) => {
        const first = validateSubmission(input);
        if (!first.ok) return;
        accepted += 1;
        const second = validateSubmission({ ...first.value });
        expect(second).toEqual(first);
      }),
      { numRuns: RUNS },
    );
    // The generators must reach the accepting branch often enough for the property to mean something.
    expect(accepted).toBeGreaterThan(RUNS / 50);
  });

  it('the text normalisers are idempotent', () => {
    fc.assert(
      fc.property(fc.oneof(tricky, hostile), (s) => {
        expect(normaliseLine(normaliseLine(s))).toBe(normaliseLine(s));
        expect(normaliseMultiline(normaliseMultiline(s))).toBe(normaliseMultiline(s));
      }),
      { numRuns: RUNS },
    );
  });

  it('whatever the server accepts, the landing accepts too (same rules, same values)', () => {
    fc.assert(
      fc.property(body, (input) => {
        const server = validateSubmission(input);
        if (!server.ok) return;
        const landing = validateLeadFields(input);
        expect(landing.ok).toBe(true);
        if (landing.ok) {
          for (const f of LEAD_FIELDS) expect(landing.value[f]).toEqual(server.value[f]);
        }
      }),
      { numRuns: RUNS },
    );
  });

  it('an accepted field is within its code unit bound, keeps no long mark run and no invisible character but emoji joiners', () => {
    const longRun = new RegExp(`\\p{M}{${COMBINING_MARKS_MAX + 1}}`, 'u');
    fc.assert(
      fc.property(fc.record(Object.fromEntries(LEAD_FIELDS.map((f) => [f, hostile]))), (input) => {
        for (const f of LEAD_FIELDS) {
          const result = validateLeadFields({ ...input, name: 'Анна', telegram: '@anna_k', phone: '+79991234567', [f]: input[f] });
          if (!result.ok) continue;
          const value = result.value[f] ?? '';
          expect(value.length).toBeLessThanOrEqual(FIELD_UNITS_MAX[f]);
          expect(value).not.toMatch(longRun);
          expect(value.replace(/\u200D|\uFE0F/g, '')).not.toMatch(/\p{Default_Ignorable_Code_Point}/u);
        }
      }),
      { numRuns: RUNS / 4 },
    );
  });
});
