import { WindowCounterStorage } from './window-counter.storage';

describe('WindowCounterStorage', () => {
  let t = 1_000_000;
  const storage = new WindowCounterStorage(() => t);

  it('counts a caller to its limit, then refuses it for the block, then opens a new window', async () => {
    for (let i = 1; i <= 3; i += 1)
      expect(await storage.increment('submit:a', 60_000, 3, 60_000)).toMatchObject({ totalHits: i, isBlocked: false });
    expect(await storage.increment('submit:a', 60_000, 3, 60_000)).toEqual({
      totalHits: 4,
      timeToExpire: 60,
      isBlocked: true,
      timeToBlockExpire: 60,
    });
    t += 59_500;
    expect(await storage.increment('submit:a', 60_000, 3, 60_000)).toMatchObject({ isBlocked: true, timeToBlockExpire: 1 });
    t += 500;
    expect(await storage.increment('submit:a', 60_000, 3, 60_000)).toEqual({
      totalHits: 1,
      timeToExpire: 60,
      isBlocked: false,
      timeToBlockExpire: 0,
    });
  });

  it('counts each caller apart, and a window that ended starts again from one', async () => {
    expect(await storage.increment('submit:b', 1_000, 1, 1_000)).toMatchObject({ totalHits: 1, isBlocked: false });
    expect(await storage.increment('submit:c', 1_000, 1, 1_000)).toMatchObject({ totalHits: 1, isBlocked: false });
    t += 1_000;
    expect(await storage.increment('submit:b', 1_000, 1, 1_000)).toMatchObject({ totalHits: 1, isBlocked: false });
  });

  it('drops the windows that ended, at the first request a minute after the last sweep', async () => {
    await storage.increment('submit:gone', 1_000, 5, 1_000);
    const counted = storage.size;
    t += 60_000;
    await storage.increment('submit:new', 1_000, 5, 1_000);
    expect(storage.size).toBeLessThan(counted);
  });

  it('keeps one counter per caller however many requests it makes', async () => {
    const before = storage.size;
    for (let i = 0; i < 100_000; i += 1) await storage.increment('submit:busy', 60_000, 1_000_000_000, 60_000);
    expect(storage.size).toBe(before + 1);
    expect(await storage.increment('submit:busy', 60_000, 1_000_000_000, 60_000)).toMatchObject({ totalHits: 100_001 });
  });
});
