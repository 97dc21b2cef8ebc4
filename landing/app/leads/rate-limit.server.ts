/**
 * Seed, `rateLimit.ts`: 5 submissions per IP per 10 minutes, in memory. The IP is the first value of
 * x-forwarded-for, else the socket address.
 */
export const LANDING_LIMIT = 5;
export const LANDING_WINDOW_MS = 10 * 60 * 1000;

export function visitorIp(headers: Headers, socketAddress: string | undefined): string {
  const forwarded = headers.get('x-forwarded-for')?.split(',')[0]?.trim();
  return forwarded || socketAddress || 'unknown';
}

export class RateLimiter {
  private readonly hits = new Map<string, number[]>();

  constructor(
    private readonly limit = LANDING_LIMIT,
    private readonly windowMs = LANDING_WINDOW_MS,
  ) {}

  /** Counts a submission from `ip` at `now` unless the window is full; true when it is allowed. */
  take(ip: string, now: number): boolean {
    const recent = (this.hits.get(ip) ?? []).filter((t) => now - t < this.windowMs);
    if (recent.length >= this.limit) {
      this.hits.set(ip, recent);
      return false;
    }
    recent.push(now);
    this.hits.set(ip, recent);
    if (this.hits.size > 10_000) this.sweep(now);
    return true;
  }

  /** Forgets visitors whose window is empty (keeps memory bounded). */
  private sweep(now: number): void {
    for (const [ip, times] of this.hits) if (times.every((t) => now - t >= this.windowMs)) this.hits.delete(ip);
  }
}

/** The process-wide limiter the action uses. */
export const visitorLimiter = new RateLimiter();
