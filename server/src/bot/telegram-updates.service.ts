import { Inject, Injectable, Logger } from '@nestjs/common';
import { errorText } from '@stickers/shared';
import { Clock } from '../clock/clock';
import { SERVER_CONFIG } from '../config/config.module';
import type { ServerConfig } from '../config/config';
import { LeasesRepository } from '../repositories/leases.repository';

/** Telegram keeps an update it could not deliver at most 24 hours; forgotten after that, every 10 minutes. */
const UPDATE_MEMORY_MS = 24 * 60 * 60 * 1000;
const PRUNE_EVERY_MS = 10 * 60 * 1000;
/** A handling unfinished after three Bot API calls' TELEGRAM_TIMEOUT_MS lost its instance (the member waits meanwhile). */
const CALLS_PER_UPDATE = 3;

/** Each webhook update handled once across instances; a claim unfinished longer than any handling may be taken again. */
@Injectable()
export class TelegramUpdatesService {
  private readonly logger = new Logger('Bot');
  private prunedAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly repo: LeasesRepository,
    private readonly clock: Clock,
    @Inject(SERVER_CONFIG) private readonly config: ServerConfig,
  ) {}

  /** `busy`: being handled now (Telegram comes back later); a database that cannot answer does not hold updates back. */
  async claim(id: number): Promise<'handle' | 'handled' | 'busy'> {
    const now = this.clock.now();
    try {
      await this.pruneNowAndThen(now);
      if (await this.repo.claimUpdate(id, now, now - CALLS_PER_UPDATE * this.config.telegramTimeoutMs)) return 'handle';
      const seen = await this.repo.updateSeen(id);
      if (seen === 'unseen') return 'handle';
      this.logger.log({ msg: 'telegram update delivered again', update_id: id, state: seen });
      return seen === 'handled' ? 'handled' : 'busy';
    } catch (err) {
      this.logger.warn({ msg: 'telegram update not claimed: handled without the check', update_id: id, error: errorText(err) });
      return 'handle';
    }
  }

  async handled(id: number): Promise<void> {
    try {
      await this.repo.markUpdateHandled(id, this.clock.now());
    } catch (err) {
      // Left unfinished: a delivery again after the handling bound is handled again (at least once).
      this.logger.warn({ msg: 'telegram update not marked handled', update_id: id, error: errorText(err) });
    }
  }

  /** A failure only waits for the next time. */
  private async pruneNowAndThen(now: number): Promise<void> {
    if (now - this.prunedAt < PRUNE_EVERY_MS) return;
    this.prunedAt = now;
    try {
      await this.repo.pruneUpdates(now - UPDATE_MEMORY_MS);
    } catch (err) {
      this.logger.warn({ msg: 'telegram updates not pruned', error: errorText(err) });
    }
  }
}
