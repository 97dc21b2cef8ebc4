import { lastLocalDays } from './local-days';

const utc = (d: number, h: number, month = 8) => Date.UTC(2026, month, d, h);

describe('lastLocalDays', () => {
  it('starts each day at its first moment, also when a DST change skips midnight (Santiago, 6 September 2026)', () => {
    const { dates, starts } = lastLocalDays(utc(7, 15), 'America/Santiago', 3);
    expect(dates).toEqual(['2026-09-05', '2026-09-06', '2026-09-07']);
    // 00:00 on the 6th does not exist: the clocks go from 23:59:59 on the 5th (UTC-4) to 01:00 (UTC-3) at 04:00 UTC.
    expect(starts).toEqual([utc(5, 4), utc(6, 4), utc(7, 3), utc(8, 3)]);
  });

  it('starts a day the clocks repeat an hour of at its first midnight, and a day in Moscow at 21:00 UTC', () => {
    expect(lastLocalDays(Date.UTC(2026, 9, 25, 12), 'Europe/Berlin', 1).starts).toEqual([
      Date.UTC(2026, 9, 24, 22),
      Date.UTC(2026, 9, 25, 23),
    ]);
    expect(lastLocalDays(utc(30, 12, 10), 'Europe/Moscow', 1).starts).toEqual([utc(29, 21, 10), utc(30, 21, 10)]);
  });
});
