import { visitorAddress, type TrustProxy } from '@stickers/shared';

/**
 * 5 submissions per IP per 10 minutes, in memory (`rateLimit.ts`). Only delivered submissions count: a slot
 * is taken when a request passes the checks (so parallel requests cannot all slip through) and given back when
 * its delivery fails, so a visitor retrying after an error is not throttled by their own retries.
 */
export const LANDING_LIMIT = 5;
export const LANDING_WINDOW_MS = 10 * 60 * 1000;

/** The limiter's key for requests whose address could not be derived: they share one window. */
export const UNKNOWN_VISITOR = 'unknown';

/**
 * The visitor's address: the socket address, or with TRUST_PROXY the first hop of X-Forwarded-For that is not one
 * of our proxies. Null when no valid address can be derived (then no `client_ip` is sent).
 */
export function visitorIp(headers: Headers, socketAddress: string | undefined, trust: TrustProxy): string | null {
  const forwardedFor = headers.get('x-forwarded-for');
  if (forwardedFor !== null && trust.mode === 'none' && !warnedAboutProxy) {
    warnedAboutProxy = true;
    console.warn(
      "[landing] requests carry X-Forwarded-For but TRUST_PROXY is not set: the proxy's address counts as the visitor " +
        '(all visitors behind it share one limit). Behind your own proxy, set TRUST_PROXY.',
    );
  }
  return visitorAddress(socketAddress, forwardedFor, trust);
}

let warnedAboutProxy = false;

/** The warning above is given once per process; tests start over. */
export function resetProxyWarning(): void {
  warnedAboutProxy = false;
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

  /** Gives back the slot `take(ip, at)` counted: that submission was not delivered. */
  release(ip: string, at: number): void {
    const times = this.hits.get(ip);
    const i = times?.lastIndexOf(at) ?? -1;
    if (times && i >= 0) times.splice(i, 1);
  }

  /** Forgets visitors whose window is empty (keeps memory bounded). */
  private sweep(now: number): void {
    for (const [ip, times] of this.hits) if (times.every((t) => now - t >= this.windowMs)) this.hits.delete(ip);
  }
}

/** The process-wide limiter the action uses. */
export const visitorLimiter = new RateLimiter();
