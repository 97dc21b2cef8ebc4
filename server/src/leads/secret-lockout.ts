import { Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { Clock } from '../clock/clock';
import { RateEventsRepository } from '../rate-limits/rate-events.repository';
import { retryAfterSeconds } from './lead-submission';

/** Seed: "5 wrong-secret attempts in 10 minutes" lock the caller out. */
export const SECRET_FAILURE_LIMIT = 5;
export const SECRET_FAILURE_WINDOW_MS = 10 * 60 * 1000;

/**
 * The wrong-secret lockout. Failures live in SQLite (they survive a restart); this keeps, in memory, which callers
 * failed within the window (loaded from SQLite at start), so the common case — a caller that never sent a wrong
 * secret — costs no query. The profile of `npm run bench` showed that query on every request.
 */
@Injectable()
export class SecretLockout implements OnApplicationBootstrap {
  private readonly lastFailure = new Map<string, number>();

  constructor(
    private readonly rateEvents: RateEventsRepository,
    private readonly clock: Clock,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    for (const f of await this.rateEvents.recent('secret_failure', this.clock.now() - SECRET_FAILURE_WINDOW_MS)) {
      this.lastFailure.set(f.key_hash, Math.max(f.at, this.lastFailure.get(f.key_hash) ?? 0));
    }
  }

  /** Seconds until the caller may try again, or null when it is not locked out. */
  async retryAfterSec(callerHash: string): Promise<number | null> {
    const now = this.clock.now();
    const last = this.lastFailure.get(callerHash);
    if (last === undefined) return null;
    if (now - last >= SECRET_FAILURE_WINDOW_MS) {
      this.lastFailure.delete(callerHash);
      return null;
    }
    const wait = await this.rateEvents.msUntilRoom({ kind: 'secret_failure', keyHash: callerHash, limit: SECRET_FAILURE_LIMIT, windowMs: SECRET_FAILURE_WINDOW_MS, now });
    return wait === null ? null : retryAfterSeconds(wait);
  }

  async recordFailure(callerHash: string): Promise<void> {
    const now = this.clock.now();
    await this.rateEvents.record('secret_failure', callerHash, now);
    this.lastFailure.set(callerHash, now);
  }
}
