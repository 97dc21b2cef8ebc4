import { Inject, Injectable, Logger, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import { AlertsService } from '../alerts/alerts.service';
import { Clock } from '../clock/clock';
import { RateEventsRepository } from '../repositories/rate-events.repository';
import { retryAfterSeconds } from '../http/api-error';
import { MESSAGES } from '../i18n/i18n.module';
import type { Messages } from '../i18n';

/** docs/requirements.md §3.3: 5 wrong-secret attempts in 10 minutes lock the caller out. */
const SECRET_FAILURE_LIMIT = 5;
export const SECRET_FAILURE_WINDOW_MS = 10 * 60 * 1000;

/** The wrong-secret lockout, kept in the database; memory spares a query for a caller that never failed (one instance). */
@Injectable()
export class SecretLockout implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('LeadsAccess');
  private readonly lastFailure = new Map<string, number>();
  private readonly alertsInFlight = new Set<Promise<void>>();

  constructor(
    private readonly rateEvents: RateEventsRepository,
    private readonly clock: Clock,
    private readonly alerts: AlertsService,
    @Inject(MESSAGES) private readonly t: Messages,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    for (const f of await this.rateEvents.recent('secret_failure', this.clock.now() - SECRET_FAILURE_WINDOW_MS)) {
      this.lastFailure.set(f.key_hash, Math.max(f.at, this.lastFailure.get(f.key_hash) ?? 0));
    }
  }

  /** An alert still being sent belongs to this app: it finishes before the database closes. */
  async beforeApplicationShutdown(): Promise<void> {
    await Promise.all([...this.alertsInFlight]);
  }

  /** Seconds until the caller may try again, or null when it is not locked out. */
  async retryAfterSec(callerHash: string): Promise<number | null> {
    const now = this.clock.now();
    // Several instances (PostgreSQL): failures another instance counted are only in the table.
    if (!this.rateEvents.sharedAcrossInstances) {
      const last = this.lastFailure.get(callerHash);
      if (last === undefined) return null;
      if (now - last >= SECRET_FAILURE_WINDOW_MS) {
        this.lastFailure.delete(callerHash);
        return null;
      }
    }
    const wait = await this.waitMs(callerHash, now);
    return wait === null ? null : retryAfterSeconds(wait);
  }

  /** Counts a wrong secret; when it is the one that locks the caller out, alerts ops (not awaited by the answer). */
  async recordFailure(callerHash: string): Promise<void> {
    const now = this.clock.now();
    await this.rateEvents.record('secret_failure', callerHash, now);
    this.lastFailure.set(callerHash, now);
    // A locked-out caller is refused before its secret is looked at: a full window means this failure started it.
    const wait = await this.waitMs(callerHash, now);
    if (wait !== null) this.alertLockout(callerHash, retryAfterSeconds(wait));
  }

  private waitMs(callerHash: string, now: number): Promise<number | null> {
    return this.rateEvents.msUntilRoom({
      kind: 'secret_failure',
      keyHash: callerHash,
      limit: SECRET_FAILURE_LIMIT,
      windowMs: SECRET_FAILURE_WINDOW_MS,
      now,
    });
  }

  private alertLockout(callerHash: string, seconds: number): void {
    // Named by the start of its address HMAC; once an hour at most (a stale secret relocks every 10 min).
    const caller = callerHash.slice(0, 10);
    const minutes = Math.ceil(seconds / 60);
    const text = this.t.alerts.secretLockout(SECRET_FAILURE_LIMIT, SECRET_FAILURE_WINDOW_MS / 60_000, caller, minutes);
    const sending = this.alerts
      .sendThrottled(`secret_lockout:${caller}`, 60 * 60 * 1000, text)
      .then((alert) => this.logger.warn({ msg: 'caller locked out after wrong secrets', caller, retry_after_sec: seconds, alert }))
      .finally(() => this.alertsInFlight.delete(sending));
    this.alertsInFlight.add(sending);
  }
}
