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

/** The wall clock in `timezone` (an IANA name, LEADS_TIMEZONE) at the instant `ms`: the calendar date and the time of day, as numbers. */
export function localWallTime(ms: number, timezone: string) {
  const parts: Record<string, number> = Object.fromEntries(
    new Intl.DateTimeFormat('en-CA', { ...WALL_CLOCK_FIELDS, timeZone: timezone })
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
