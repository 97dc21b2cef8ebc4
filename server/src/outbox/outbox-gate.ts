import { Injectable, Logger } from '@nestjs/common';
import { errorText } from '@stickers/shared';
import { Clock } from '../clock/clock';
import { Metrics } from '../observability/metrics';
import { SettingsRepository } from '../repositories/settings.repository';
import { TelegramGateway } from '../telegram/telegram.gateway';
import type { Outcome } from './outcome';

/** The settings row that shares a flood pause between instances: Telegram's limits are per bot token. */
export const FLOOD_UNTIL_SETTING = 'telegram_flood_until';

/** Whether the outbox may call Telegram now: a bot, no flood pause (docs/requirements.md §4.3), not stopped (§4.1). */
@Injectable()
export class OutboxGate {
  private readonly logger = new Logger('Outbox');
  /** Flood control: no Bot API call before this time (Telegram's retry_after, obeyed exactly). */
  private pausedUntil = 0;
  private wakeTimer: NodeJS.Timeout | null = null;
  onPauseEnd: () => void = () => undefined;
  private pausedLogged = false;
  stopped = false;

  constructor(
    private readonly telegram: TelegramGateway,
    private readonly clock: Clock,
    private readonly metrics: Metrics,
    private readonly settings: SettingsRepository,
  ) {}

  /** A Bot API call may go out: a bot exists (its absence is logged once) and no flood pause holds. */
  ready(): boolean {
    return this.hasBot() && this.clock.now() >= this.pausedUntil;
  }

  hasBot(): boolean {
    if (this.telegram.available) return true;
    this.pausedOnce('publishing paused: TELEGRAM_BOT_TOKEN is not set (leads are stored)');
    return false;
  }

  /** Publishing waits for a reason ops hear about once (no bot, no leads chat). */
  pausedOnce(msg: string): void {
    if (!this.pausedLogged) this.logger.warn({ msg });
    this.pausedLogged = true;
  }

  /** Telegram asked to wait: every instance waits exactly `pauseMs` (shared through the settings). Gives the pause's end. */
  async flood(pauseMs: number, description: string): Promise<number> {
    const now = this.clock.now();
    this.pauseUntil(now + pauseMs);
    this.metrics.inc('telegram_flood_total');
    this.logger.warn({ msg: 'flood control', retry_after_sec: pauseMs / 1000, error: description });
    // Not shared, the pause still holds here; the other instances learn of it from their own 429 instead.
    await this.settings.set(FLOOD_UNTIL_SETTING, String(this.pausedUntil), now).catch((err: unknown) => {
      this.logger.warn({ msg: 'flood pause not shared', error: errorText(err) });
    });
    return this.pausedUntil;
  }

  /** A 429's outcome: the row waits for the pause, and its lane sends nothing more this pass. */
  async pause(pauseMs: number, description: string): Promise<Outcome> {
    return { defer: await this.flood(pauseMs, description), stop: true };
  }

  /** Adopts a flood pause another instance got. Database errors propagate (the pass fails and backs off). */
  async syncFlood(): Promise<void> {
    const shared = Number(await this.settings.get(FLOOD_UNTIL_SETTING));
    if (Number.isFinite(shared) && shared > this.pausedUntil && shared > this.clock.now()) {
      const wait = Math.ceil((shared - this.clock.now()) / 1000);
      this.logger.warn({ msg: 'flood control (another instance got a 429)', retry_after_sec: wait });
      this.pauseUntil(shared);
    }
  }

  private pauseUntil(until: number): void {
    this.pausedUntil = until;
    if (this.wakeTimer) clearTimeout(this.wakeTimer);
    this.wakeTimer = setTimeout(() => this.onPauseEnd(), Math.max(0, until - this.clock.now()));
    this.wakeTimer.unref();
  }

  stop(): void {
    this.stopped = true;
    if (this.wakeTimer) clearTimeout(this.wakeTimer);
  }
}
