import { LEAD_FIELDS, normaliseLine, normaliseMultiline } from '@stickers/shared';
import { parseHtml } from '@stickers/telegram-sandbox';
import fc from 'fast-check';
import { LEAD_STATUSES } from '../domain/lead-status';
import { ru } from '../i18n/ru';
import { TELEGRAM_TEXT_MAX } from '../telegram/telegram.gateway';
import { type CardLead, type CardRepeat, renderCard, telegramTextLength } from './card.renderer';

const RUNS = 300;

// Hostile text: combining marks, emoji ZWJ pieces, skin tones, variation selectors, tag characters, surrogate
// halves, markup characters, bidi and other invisible marks, line and paragraph separators, anything at all.
const unit = fc.oneof(
  fc.constantFrom('\u0301', '\u20E3', '\u200D', '\uFE0F', '\u2060', '\u061C', '\u00AD', '\u202E', '\u200F', '\u2028', '\r'),
  fc.constantFrom('\u{E0041}', '\uD83D', '\uDE00', '<', '>', '&', '"', '&amp;', '<b>', '\n', ' ', '😀', '👨', '🏽', 'Я', 'a'),
  fc.integer({ min: 0, max: 0x10ffff }).map((cp) => String.fromCodePoint(cp)),
);
const blob = (head: string, piece: string, n: number) => head + piece.repeat(n);
const hostile = fc.oneof(
  fc.string({ unit, maxLength: 200 }),
  // Huge runs: one letter with thousands of marks, ZWJ chains, emoji families, markup that doubles when escaped.
  fc
    .tuple(fc.string({ unit, maxLength: 3 }), fc.constantFrom('\u0301', '\u200D👨', '👨‍👩‍👧', '&<>"', '🧑🏽‍🚀', 'ж\n'), fc.nat(7000))
    .map(([head, piece, n]) => blob(head, piece, n)),
);
/** A field as stored: raw (as if it bypassed the field rules), or as the shared normaliser leaves it, or missing. */
const field = (multiline: boolean) =>
  fc.oneof(
    hostile,
    hostile.map((s) => (multiline ? normaliseMultiline(s) : normaliseLine(s))),
    fc.constant(null),
  );

const lead: fc.Arbitrary<CardLead> = fc.record({
  id: fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
  name: field(false),
  telegram: fc.oneof(field(false), fc.stringMatching(/^@[A-Za-z][A-Za-z0-9_]{4,31}$/)),
  phone: field(false),
  date: field(false),
  guests: field(false),
  comment: field(true),
  status: fc.constantFrom(...LEAD_STATUSES),
  created_at: fc.integer({ min: 0, max: 4102444800000 }),
  anonymised_at: fc.option(fc.nat(), { freq: 5 }),
  status_changed_by: fc.option(hostile),
  status_changed_at: fc.option(fc.integer({ min: 1, max: 4102444800000 })),
  // A late lead's line, through the fallback or not.
  fallback_sent_at: fc.option(fc.integer({ min: 0, max: 4102444800000 })),
  late_route: fc.option(fc.constantFrom('fallback', 'lost')),
  received_at: fc.option(fc.integer({ min: 0, max: 4102444800000 })),
  // Where it came from: the source line, with values raw or normalised, or none.
  source_landing: field(false),
  utm_source: field(false),
  utm_medium: field(false),
  utm_campaign: field(false),
  // The landing's captcha: the warning line of an unchecked one, or none.
  captcha: fc.option(fc.constantFrom('passed' as const, 'unchecked' as const)),
});
const repeat: fc.Arbitrary<CardRepeat> = fc.record({
  created_at: fc.integer({ min: 0, max: 4102444800000 }),
  changes: fc.record(Object.fromEntries(LEAD_FIELDS.map((f) => [f, field(f === 'comment').map((v) => v ?? undefined)])), {
    requiredKeys: [],
  }),
});
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

describe('renderCard (property): any lead with 0–3 repeats, PII on or off, fits Telegram', () => {
  it('text ≤ 4096 UTF-16 units after entity parsing, plain ≤ 4096, HTML well-formed, buttons within limits', () => {
    fc.assert(
      fc.property(lead, fc.array(repeat, { maxLength: 3 }), fc.boolean(), (l, repeats, pii) => {
        const card = renderCard(l, repeats, { pii, timezone: 'Europe/Moscow', messages: ru });
        expect(telegramTextLength(card.html)).toBeLessThanOrEqual(TELEGRAM_TEXT_MAX);
        expect(card.plain.length).toBeLessThanOrEqual(TELEGRAM_TEXT_MAX);
        // The sandbox parses HTML the way Telegram does and refuses what Telegram refuses.
        const parsed = parseHtml(card.html);
        expect(parsed.ok).toBe(true);
        if (parsed.ok) expect(parsed.text).toBe(card.plain);
        // Bold is the only markup, balanced and never nested.
        (card.html.match(/<[^>]*>/g) ?? []).forEach((tag, i) => expect(tag).toBe(i % 2 === 0 ? '<b>' : '</b>'));
        // Telegram takes UTF-8 only: a cut never leaves half a surrogate pair.
        expect(card.html).not.toMatch(LONE_SURROGATE);
        for (const row of card.keyboard.inline_keyboard) {
          for (const button of row) {
            if ('callback_data' in button) expect(Buffer.byteLength(button.callback_data)).toBeLessThanOrEqual(64);
            else expect('url' in button && button.url).toMatch(/^https:\/\/t\.me\/[A-Za-z][A-Za-z0-9_]{4,31}$/);
          }
        }
      }),
      { numRuns: RUNS },
    );
  });
});
