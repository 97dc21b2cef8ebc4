import { instantOfWallTime, localDate } from '../clock/local-time';

/** The instant a local date (`YYYY-MM-DD`) begins in `timezone` (its first moment when a DST change skips midnight). */
function localMidnight(date: string, timezone: string): number {
  const [y, m, d] = date.split('-').map(Number);
  return instantOfWallTime(Date.UTC(y, m - 1, d), timezone).at;
}

/** The date `n` days after a `YYYY-MM-DD` date, on the calendar alone. */
function addDays(date: string, n: number): string {
  const [y, m, d] = date.split('-').map(Number);
  return new Date(Date.UTC(y, m - 1, d + n)).toISOString().slice(0, 10);
}

/** The `count` local days ending today, oldest first: their dates, and where each begins (plus where the last ends). */
export function lastLocalDays(now: number, timezone: string, count: number): { dates: string[]; starts: number[] } {
  const today = localDate(now, timezone);
  const dates = Array.from({ length: count }, (_, i) => addDays(today, i - count + 1));
  const starts = [...dates, addDays(today, 1)].map((d) => localMidnight(d, timezone));
  return { dates, starts };
}
