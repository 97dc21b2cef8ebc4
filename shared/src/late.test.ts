import { describe, expect, it } from 'vitest';
import { LATE_FUTURE_SKEW_MS, LATE_MAX_AGE_MS, parseIsoTime, REPORTED_FIELDS, validateLate } from './late.js';

const NOW = Date.UTC(2026, 11, 1, 10, 20, 0);
const iso = (ms: number) => new Date(ms).toISOString();
/** The object the landing's replay sends (its spool entry's `late`). */
const late = (overrides: Record<string, unknown> = {}) => ({
  submitted_at: '2026-12-01T10:15:30.123Z',
  route: 'fallback',
  reason: '503',
  fallback: { chat_id: '-1001234567890', message_id: 4711, sent_at: '2026-12-01T10:15:31.001Z' },
  ...overrides,
});
const fallback = (overrides: Record<string, unknown>) => late({ fallback: { ...late().fallback, ...overrides } });

describe('validateLate (the replayed request)', () => {
  it('absent or null: an ordinary request', () => {
    expect(validateLate(undefined, NOW)).toEqual({ ok: true, value: null });
    expect(validateLate(null, NOW)).toEqual({ ok: true, value: null });
  });

  it('reads what the landing sends, times as milliseconds', () => {
    expect(validateLate(late(), NOW)).toEqual({
      ok: true,
      value: {
        submitted_at: Date.parse('2026-12-01T10:15:30.123Z'),
        route: 'fallback',
        reason: '503',
        fallback: { chat_id: '-1001234567890', message_id: 4711, sent_at: Date.parse('2026-12-01T10:15:31.001Z') },
        skewMs: 0,
      },
    });
  });

  it('route lost without a fallback message; only the landing’s routes; the reasons the landing writes', () => {
    const { fallback: _, ...lost } = late({ route: 'lost', reason: 'timeout' });
    expect(validateLate(lost, NOW)).toMatchObject({ ok: true, value: { route: 'lost', reason: 'timeout', fallback: null } });
    expect(validateLate(late({ fallback: null }), NOW)).toMatchObject({ ok: true, value: { fallback: null } });
    for (const route of ['fallback', 'lost']) expect(validateLate(late({ route }), NOW).ok).toBe(true);
    for (const route of ['server-rejected', 'direct', 'x']) expect(validateLate(late({ route }), NOW).ok).toBe(false);
    for (const reason of ['401', '429 secret', 'network', '5xx (bad gateway)']) expect(validateLate(late({ reason }), NOW).ok).toBe(true);
  });

  it("carries the fallback claim's signature when there is one (checked on the server, not here)", () => {
    const sig = 'PsepT8zG4_Pkyiff_X5IXjl2q9VoYla1dh7WVoEGzPY';
    expect(validateLate(fallback({ sig }), NOW)).toMatchObject({ ok: true, value: { fallback: { chat_id: '-1001234567890', sig } } });
    expect(validateLate(fallback({ sig: 'x'.repeat(128) }), NOW).ok).toBe(true);
    const unsigned = validateLate(late(), NOW);
    expect(unsigned.ok && unsigned.value?.fallback).not.toHaveProperty('sig');
  });

  it('an @name chat id and an offset time are fine', () => {
    expect(validateLate(fallback({ chat_id: '@stickers_leads' }), NOW).ok).toBe(true);
    expect(validateLate(late({ submitted_at: '2026-12-01T13:15:30+03:00' }), NOW)).toMatchObject({
      ok: true,
      value: { submitted_at: Date.UTC(2026, 11, 1, 10, 15, 30) },
    });
  });

  it.each([
    ['not an object', 'late'],
    ['an array', []],
    ['an unknown key', late({ extra: 1 })],
    ['an unknown key in fallback', fallback({ text: 'Анна' })],
    ['no submitted_at', late({ submitted_at: undefined })],
    ['a time that is no time', late({ submitted_at: 'yesterday' })],
    ['a date without a time', late({ submitted_at: '2026-12-01' })],
    ['a time without a zone', late({ submitted_at: '2026-12-01T10:15:30' })],
    ['30 February', late({ submitted_at: '2026-02-30T10:00:00Z' })],
    ['24:00', late({ submitted_at: '2026-12-01T24:00:00Z' })],
    ['a number for the time', late({ submitted_at: NOW })],
    ['no route', late({ route: undefined })],
    ['a route that is not a word', late({ route: 'Fall back' })],
    ['a long route', late({ route: 'a'.repeat(33) })],
    ['a route no landing has', late({ route: 'server' })],
    ['an invented route', late({ route: 'lost_and_found' })],
    ['a submitted_at more than a day ahead', late({ submitted_at: iso(NOW + LATE_FUTURE_SKEW_MS + 1) })],
    ['markup in the reason', late({ reason: '<b>503</b>' })],
    ['a line break in the reason', late({ reason: '503\nx' })],
    ['an empty reason', late({ reason: '' })],
    ['a long reason', late({ reason: '5'.repeat(61) })],
    ['a number for the reason', late({ reason: 503 })],
    ['a fallback that is not an object', late({ fallback: 4711 })],
    ['a numeric chat id', fallback({ chat_id: -1001234567890 })],
    ['a chat id that is no id', fallback({ chat_id: 'leads group' })],
    ['a message id of 0', fallback({ message_id: 0 })],
    ['a negative message id', fallback({ message_id: -5 })],
    ['a fractional message id', fallback({ message_id: 1.5 })],
    ['a message id as text', fallback({ message_id: '4711' })],
    ['no sent_at', fallback({ sent_at: undefined })],
    ['a signature that is not text', fallback({ sig: 42 })],
    ['an empty signature', fallback({ sig: '' })],
    ['a signature that is not base64url', fallback({ sig: 'PsepT8zG4/Pkyiff+X5IXjl2q9VoYla1dh7WVoEGzPY=' })],
    ['a long signature', fallback({ sig: 'x'.repeat(129) })],
    ['a sent_at more than a day ahead', fallback({ sent_at: iso(NOW + LATE_FUTURE_SKEW_MS + 1000) })],
  ])('refuses %s', (_, raw) => {
    expect(validateLate(raw, NOW)).toEqual({ ok: false });
  });

  it('a landing clock ahead: submitted_at and sent_at are taken as the server’s now, the skew reported, up to a day', () => {
    const ahead = validateLate(
      late({ submitted_at: iso(NOW + 10 * 60_000), fallback: { chat_id: '-1001', message_id: 7, sent_at: iso(NOW + 10 * 60_000) } }),
      NOW,
    );
    expect(ahead).toMatchObject({ ok: true, value: { submitted_at: NOW, skewMs: 10 * 60_000, fallback: { sent_at: NOW } } });
    // The ordinary difference of two clocks is not news.
    expect(validateLate(late({ submitted_at: iso(NOW + 30_000) }), NOW)).toMatchObject({
      ok: true,
      value: { submitted_at: NOW, skewMs: 0 },
    });
    expect(validateLate(late({ submitted_at: iso(NOW + LATE_FUTURE_SKEW_MS) }), NOW).ok).toBe(true);
  });

  it('submitted_at: at most 30 days old (the landing keeps 7 by default)', () => {
    expect(validateLate(late({ submitted_at: iso(NOW - 7 * 24 * 3600_000) }), NOW).ok).toBe(true);
    expect(validateLate(late({ submitted_at: iso(NOW - LATE_MAX_AGE_MS) }), NOW).ok).toBe(true);
    expect(validateLate(late({ submitted_at: iso(NOW - LATE_MAX_AGE_MS - 1) }), NOW).ok).toBe(false);
    expect(validateLate(late({ submitted_at: iso(0) }), NOW).ok).toBe(false);
  });

  it('parseIsoTime: only real instants', () => {
    expect(parseIsoTime('2028-02-29T00:00:00Z')).toBe(Date.UTC(2028, 1, 29));
    expect(parseIsoTime('2026-02-29T00:00:00Z')).toBeNull();
    expect(parseIsoTime('2026-12-01T10:00:00+24:00')).toBeNull();
    expect(parseIsoTime(`2026-12-01T10:00:00.000Z${' '.repeat(50)}`)).toBeNull();
  });

  it('parseIsoTime: up to nine digits of a second (Python writes six), read to the millisecond', () => {
    const at = Date.UTC(2026, 11, 1, 10, 0, 0, 123);
    expect(parseIsoTime('2026-12-01T10:00:00.123456+00:00')).toBe(at);
    expect(parseIsoTime('2026-12-01T13:00:00.123456789+03:00')).toBe(at);
    expect(parseIsoTime('2026-12-01T10:00:00.1Z')).toBe(at - 23);
    expect(parseIsoTime('2026-12-01T10:00:00.1234567890Z')).toBeNull();
    expect(parseIsoTime('2026-12-01T10:00:00.Z')).toBeNull();
    expect(validateLate(late({ submitted_at: '2026-12-01T10:15:30.123456+00:00' }), NOW)).toMatchObject({
      ok: true,
      value: { submitted_at: Date.parse('2026-12-01T10:15:30.123Z') },
    });
  });

  it('late is a field the server can name in a 422', () => {
    expect(REPORTED_FIELDS).toContain('late');
    expect(REPORTED_FIELDS).toContain('request_id');
    expect(REPORTED_FIELDS).toContain('phone');
  });
});
