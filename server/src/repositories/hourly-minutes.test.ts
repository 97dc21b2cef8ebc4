/**
 * The hourly limit's read over per-minute counts: for any set of accepted events, the same answer as the
 * query it replaced (the limit-th newest event after `since`), with a bounded number of small reads however high the
 * limit — the minutes once, one count of the first minute, one read inside one minute.
 */
import fc from 'fast-check';
import { nthByMinutes } from './sqlite-submit.runner';

const MINUTE = 60_000;

/** The walk as a decision runs it on SQLite, over `reads`. */
const hourlyNth = (since: number, limit: number, reads: ReturnType<typeof readsOver>['reads']) =>
  nthByMinutes(reads, 'accepted', since, limit);
const NOW = 1_796_000_000_000;

function naive(events: number[], since: number, limit: number): number | null {
  const inWindow = events.filter((at) => at > since).sort((a, b) => b - a);
  return inWindow[limit - 1] ?? null;
}

function readsOver(events: number[]) {
  const counts = new Map<number, number>();
  for (const at of events) counts.set(Math.floor(at / MINUTE), (counts.get(Math.floor(at / MINUTE)) ?? 0) + 1);
  const asked = { minutes: 0, count: 0, nth: 0, widest: 0 };
  const between = (after: number, before: number) => events.filter((at) => at > after && at < before).sort((a, b) => b - a);
  return {
    asked,
    reads: {
      acceptedMinutes: (_kind: string, from: number) => {
        asked.minutes += 1;
        return [...counts]
          .filter(([m]) => m >= from)
          .sort((a, b) => b[0] - a[0])
          .map(([minute, n]) => ({ minute, n }));
      },
      acceptedBetween: (_kind: string, after: number, before: number) => {
        asked.count += 1;
        asked.widest = Math.max(asked.widest, before - after);
        return between(after, before).length;
      },
      nthAcceptedBetween: (_kind: string, after: number, before: number, offset: number) => {
        asked.nth += 1;
        asked.widest = Math.max(asked.widest, before - after);
        return between(after, before)[offset] ?? null;
      },
    },
  };
}

describe('the hourly limit over per-minute counts', () => {
  it('gives the limit-th newest event after since, exactly as the event query did', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: NOW - 2 * 60 * MINUTE, max: NOW }), { maxLength: 300 }),
        fc.integer({ min: 1, max: 320 }),
        fc.integer({ min: 0, max: 59_999 }),
        (events, limit, jitter) => {
          const since = NOW - 60 * MINUTE - jitter;
          const { reads, asked } = readsOver(events);
          expect(hourlyNth(since, limit, reads)).toBe(naive(events, since, limit));
          // Bounded: the minutes once, the first minute's count once, one read inside one minute.
          expect(asked.minutes).toBe(1);
          expect(asked.count).toBeLessThanOrEqual(1);
          expect(asked.nth).toBeLessThanOrEqual(1);
          expect(asked.widest).toBeLessThanOrEqual(MINUTE + 1);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('reads the same few rows for a limit of 10⁹ as for 60', () => {
    const events = Array.from({ length: 5000 }, (_, i) => NOW - i * 700);
    for (const limit of [60, 1_000_000_000]) {
      const { reads, asked } = readsOver(events);
      expect(hourlyNth(NOW - 60 * MINUTE, limit, reads)).toBe(naive(events, NOW - 60 * MINUTE, limit));
      expect(asked.minutes + asked.count + asked.nth).toBeLessThanOrEqual(3);
    }
  });
});
