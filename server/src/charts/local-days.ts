import { localDate, localWallTime } from '../clock/local-time';

/** The difference between the local wall clock in `timezone` and UTC at the instant `ms`, in ms. */
function offsetAt(ms: number, timezone: string): number {
  const t = localWallTime(ms, timezone);
  return Date.UTC(t.year, t.month - 1, t.day, t.hour, t.minute, t.second) - Math.floor(ms / 1000) * 1000;
}

/** The instant a local date (`YYYY-MM-DD`) begins in `timezone` (its first moment when a DST change skips midnight). */
function localMidnight(date: string, timezone: string): number {
  const [y, m, d] = date.split('-').map(Number);
  const wall = Date.UTC(y, m - 1, d);
  // Twice: the offset of the guess may differ from the offset at the true midnight across a DST change.
  const first = wall - offsetAt(wall, timezone);
  return wall - offsetAt(first, timezone);
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
