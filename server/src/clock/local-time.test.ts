import { formatClock, formatDay } from '../i18n';
import { dateFormat, localDate, WALL_CLOCK_FIELDS } from './local-time';

describe('dateFormat', () => {
  it('builds a formatter once per fields, locale and zone, and another for another of them', () => {
    const moscow = dateFormat(WALL_CLOCK_FIELDS, 'en-CA', 'Europe/Moscow');
    expect(dateFormat(WALL_CLOCK_FIELDS, 'en-CA', 'Europe/Moscow')).toBe(moscow);
    expect(dateFormat(WALL_CLOCK_FIELDS, 'en-CA', 'Asia/Tokyo')).not.toBe(moscow);
    expect(dateFormat(WALL_CLOCK_FIELDS, 'sv-SE', 'Europe/Moscow')).not.toBe(moscow);
    expect(dateFormat({ ...WALL_CLOCK_FIELDS }, 'en-CA', 'Europe/Moscow')).not.toBe(moscow);
    expect(moscow.resolvedOptions().timeZone).toBe('Europe/Moscow');
  });

  it('keeps each zone and locale apart when they alternate (22:30 UTC on 1 December 2026)', () => {
    const ms = Date.UTC(2026, 11, 1, 22, 30);
    expect([localDate(ms, 'Europe/Moscow'), localDate(ms, 'America/New_York'), localDate(ms, 'Europe/Moscow')]).toEqual([
      '2026-12-02',
      '2026-12-01',
      '2026-12-02',
    ]);
    expect([formatClock(ms, 'Europe/Moscow', 'ru-RU'), formatClock(ms, 'Europe/Moscow', 'en-US')]).toEqual(['01:30', '01:30 AM']);
    expect([formatDay(ms, 'Asia/Tokyo', 'ru-RU'), formatDay(ms, 'UTC', 'ru-RU')]).toEqual(['02.12.2026', '01.12.2026']);
  });
});
