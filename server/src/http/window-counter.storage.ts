import type { ThrottlerStorage } from '@nestjs/throttler';

type ThrottlerStorageRecord = Awaited<ReturnType<ThrottlerStorage['increment']>>;

interface Window {
  endsAt: number;
  hits: number;
  /** 0 while the caller is within its limit. */
  blockedUntil: number;
}

/** How often the first request after drops the windows that ended (no timer: nothing to stop at shutdown). */
const SWEEP_MS = 60_000;

/** One counter per caller and throttle, a window from its first request: one map lookup (the library's filters a list). */
export class WindowCounterStorage implements ThrottlerStorage {
  private readonly windows = new Map<string, Window>();
  private sweepAt: number;

  constructor(private readonly now: () => number = Date.now) {
    this.sweepAt = now() + SWEEP_MS;
  }

  /** The callers counted now (a window open or a refusal running). */
  get size(): number {
    return this.windows.size;
  }

  increment(key: string, ttl: number, limit: number, blockDuration: number): Promise<ThrottlerStorageRecord> {
    const now = this.now();
    if (now >= this.sweepAt) this.evict(now);
    let w = this.windows.get(key);
    if (!w || (w.blockedUntil === 0 && w.endsAt <= now) || (w.blockedUntil !== 0 && w.blockedUntil <= now)) {
      w = { endsAt: now + ttl, hits: 0, blockedUntil: 0 };
      this.windows.set(key, w);
    }
    if (w.blockedUntil === 0) {
      w.hits += 1;
      if (w.hits > limit) w.blockedUntil = now + (blockDuration > 0 ? blockDuration : ttl);
    }
    const seconds = (at: number) => Math.max(0, Math.ceil((at - now) / 1000));
    return Promise.resolve({
      totalHits: w.hits,
      timeToExpire: seconds(w.endsAt),
      isBlocked: w.blockedUntil !== 0,
      timeToBlockExpire: w.blockedUntil !== 0 ? seconds(w.blockedUntil) : 0,
    });
  }

  private evict(now: number): void {
    this.sweepAt = now + SWEEP_MS;
    for (const [key, w] of this.windows) if (w.endsAt <= now && w.blockedUntil <= now) this.windows.delete(key);
  }
}
