/** A date and a time of day to the second, 24-hour, each field of two digits (the year of four). */
export const WALL_CLOCK_FIELDS: Intl.DateTimeFormatOptions = {
  year: 'numeric',
  month: '2-digit',
  day: '2-digit',
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
  hourCycle: 'h23',
};

const formats = new WeakMap<Intl.DateTimeFormatOptions, Map<string, Intl.DateTimeFormat>>();

/**
 * The formatter of `fields` (a constant) in `locale` and `timeZone`, built once: building one costs about thirteen
 * times as much as formatting with it, and a chart or a card formats many times.
 */
export function dateFormat(fields: Intl.DateTimeFormatOptions, locale: string, timeZone: string): Intl.DateTimeFormat {
  let byZone = formats.get(fields);
  if (!byZone) formats.set(fields, (byZone = new Map<string, Intl.DateTimeFormat>()));
  const key = `${locale} ${timeZone}`;
  let format = byZone.get(key);
  if (!format) byZone.set(key, (format = new Intl.DateTimeFormat(locale, { ...fields, timeZone })));
  return format;
}

/** The wall clock in `timezone` (an IANA name, LEADS_TIMEZONE) at the instant `ms`: the calendar date and the time of day, as numbers. */
export function localWallTime(ms: number, timezone: string) {
  const parts: Record<string, number> = Object.fromEntries(
    dateFormat(WALL_CLOCK_FIELDS, 'en-CA', timezone)
      .formatToParts(new Date(ms))
      .map((p) => [p.type, Number(p.value)]),
  );
  const { year, month, day, hour, minute, second } = parts;
  return { year, month, day, hour, minute, second };
}

/** The local date of `ms` in `timezone`, `YYYY-MM-DD`. */
export function localDate(ms: number, timezone: string): string {
  const { year, month, day } = localWallTime(ms, timezone);
  return `${year}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`;
}

/** Local wall clock minus UTC at the instant `ms` (whole seconds), in ms. */
function offsetAt(ms: number, timezone: string): number {
  const t = localWallTime(ms, timezone);
  const wall = new Date(0);
  // setUTCFullYear, not Date.UTC: that one reads the years 0–99 as 1900–1999.
  wall.setUTCFullYear(t.year, t.month - 1, t.day);
  return wall.setUTCHours(t.hour, t.minute, t.second) - Math.floor(ms / 1000) * 1000;
}

export const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * The instant the wall clock in `timezone` reads `wall` (the epoch ms of those fields read as UTC, whole seconds): in
 * an hour the clock repeats, the first; in one it skips, `exists` is false and `at` is where the skip ends. A zone's
 * offset a day before and a day after are the only two it can have: no zone changes it twice within two days.
 */
export function instantOfWallTime(wall: number, timezone: string): { at: number; exists: boolean } {
  const before = wall - offsetAt(wall - DAY_MS, timezone);
  const after = wall - offsetAt(wall + DAY_MS, timezone);
  const found = [before, after].filter((at) => offsetAt(at, timezone) === wall - at);
  return found.length > 0 ? { at: Math.min(...found), exists: true } : { at: before, exists: false };
}
