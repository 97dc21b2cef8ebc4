import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LEAD_FIELDS } from './codes.js';
import { validateLeadFields, validateSubmission } from './fields.js';
import { normaliseLine, normaliseMultiline } from './text.js';

const RUNS = 2000;

// Strings that look like what people type, with the characters that make normalisation hard.
const tricky = fc.string({
  unit: fc.oneof(
    fc.constantFrom(' ', '\t', '\n', '\r', '\u00A0', '\u200B', '\u0301', 'e', '@', '+', '-', '(', ')', '/', '.', ':', '_', '7', '😀', '\uD83D', 'Я', 't'),
    fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
  ),
  maxLength: 90,
});

const fieldValue = fc.oneof(tricky, fc.jsonValue(), fc.constant(undefined));
/** Mostly plausible values (so the accepting branch is reached), sometimes anything at all. */
const mostly = <T>(plausible: fc.Arbitrary<T>) =>
  fc.oneof({ arbitrary: plausible, weight: 4 }, { arbitrary: fieldValue, weight: 1 });
const body = fc.record({
  request_id: mostly(fc.uuid({ version: 4 })),
  name: mostly(fc.string({ unit: 'grapheme', minLength: 2, maxLength: 40 })),
  telegram: mostly(fc.stringMatching(/^(@|t\.me\/|https:\/\/t\.me\/)?[A-Za-z][A-Za-z0-9_]{4,31}$/)),
  phone: mostly(fc.stringMatching(/^\+[1-9]( ?\(?\d{2,3}\)?)?[\d -]{6,12}$/)),
  date: mostly(tricky),
  guests: mostly(fc.string({ maxLength: 40 })),
  comment: mostly(tricky),
  client_ip: mostly(fc.oneof(fc.ipV4(), fc.ipV6())),
});

describe('field rules (properties)', () => {
  it('normalising never throws on any JSON value, and only names known fields', () => {
    fc.assert(
      fc.property(fc.oneof(body, fc.dictionary(fc.string(), fc.jsonValue())), (input) => {
        const result = validateSubmission(input as Record<string, unknown>);
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
        const first = validateSubmission(input as Record<string, unknown>);
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
      fc.property(tricky, (s) => {
        expect(normaliseLine(normaliseLine(s))).toBe(normaliseLine(s));
        expect(normaliseMultiline(normaliseMultiline(s))).toBe(normaliseMultiline(s));
      }),
      { numRuns: RUNS },
    );
  });

  it('whatever the server accepts, the landing accepts too (same rules, same values)', () => {
    fc.assert(
      fc.property(body, (input) => {
        const server = validateSubmission(input as Record<string, unknown>);
        if (!server.ok) return;
        const landing = validateLeadFields(input as Record<string, unknown>);
        expect(landing.ok).toBe(true);
        if (landing.ok) {
          for (const f of LEAD_FIELDS) expect(landing.value[f]).toEqual(server.value[f]);
        }
      }),
      { numRuns: RUNS },
    );
  });
});
