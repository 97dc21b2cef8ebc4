import { Injectable, Logger } from '@nestjs/common';
import { Clock } from '../clock/clock';
import { Metrics } from '../observability/metrics';
import { TelegramGateway } from '../telegram/telegram.gateway';

/**
 * Whether the outbox may call Telegram now, shared by the runner and the work it runs: not without a bot, not
 * during a flood pause (docs/requirements.md §4.3), and no new work once the runner stopped (§4.1). The pause lives
 * here rather than in the runner because a card rewrite asked for outside a pass (a button press) obeys and starts it
 * too; the runner says what happens when it ends.
 */
@Injectable()
export class OutboxGate {
  private readonly logger = new Logger('Outbox');
  /** Flood control: no Bot API call before this time (Telegram's retry_after, obeyed exactly). */
  private pausedUntil = 0;
  private wakeTimer: NodeJS.Timeout | null = null;
  private wake: () => void = () => undefined;
  private pausedLogged = false;
  private isStopped = false;

  constructor(
    private readonly telegram: TelegramGateway,
    private readonly clock: Clock,
    private readonly metrics: Metrics,
  ) {}

  get stopped(): boolean {
    return this.isStopped;
  }

  /** The end of the flood pause (0: none yet); a lead that got the 429 waits until then. */
  get pauseEndsAt(): number {
    return this.pausedUntil;
  }

  /** What runs when a flood pause ends: the runner's next pass, so waiting cards go out at once. */
  onPauseEnd(wake: () => void): void {
    this.wake = wake;
  }

  /** A Bot API call may go out: a bot exists (its absence is logged once) and no flood pause holds. */
  ready(): boolean {
    if (!this.telegram.available) {
      this.pausedOnce('publishing paused: TELEGRAM_BOT_TOKEN is not set (leads are stored)');
      return false;
    }
    return this.clock.now() >= this.pausedUntil;
  }

  /** Publishing waits for a reason ops must hear about, once (no bot, no leads chat). */
  pausedOnce(msg: string): void {
    if (!this.pausedLogged) this.logger.warn({ msg });
    this.pausedLogged = true;
  }

  /** Telegram asked to wait: every call of the outbox waits exactly `pauseMs`; `defer` notes it first (the lead's time). */
  async flood(pauseMs: number, description: string, defer: () => Promise<void> = () => Promise.resolve()): Promise<'flood'> {
    this.pausedUntil = this.clock.now() + pauseMs;
    this.metrics.inc('telegram_flood_total');
    await defer();
    this.logger.warn({ msg: 'flood control', retry_after_sec: pauseMs / 1000, error: description });
    if (this.wakeTimer) clearTimeout(this.wakeTimer);
    this.wakeTimer = setTimeout(() => this.wake(), pauseMs);
    this.wakeTimer.unref();
    return 'flood';
  }

  stop(): void {
    this.isStopped = true;
    if (this.wakeTimer) clearTimeout(this.wakeTimer);
  }
}
