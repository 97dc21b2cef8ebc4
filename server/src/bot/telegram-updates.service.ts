import { Inject, Injectable, Logger } from '@nestjs/common';
import { Clock } from '../clock/clock';
import { SERVER_CONFIG } from '../config/config.module';
import type { ServerConfig } from '../config/config';
import { TelegramUpdatesRepository } from '../repositories/telegram-updates.repository';

/** How long an update is remembered: Telegram keeps an update it could not deliver at most 24 hours. */
export const UPDATE_MEMORY_MS = 24 * 60 * 60 * 1000;
/** How often an instance forgets the updates older than that (one indexed delete). */
const PRUNE_EVERY_MS = 10 * 60 * 1000;
/**
 * An update's handling takes a few Bot API calls (each bounded by TELEGRAM_TIMEOUT_MS) and queries; one unfinished
 * for longer than three of them lost its instance, and its next delivery is handled. Not longer: Telegram (and the
 * load balancer) keeps redelivering a press meanwhile, and the member waits for it.
 */
const CALLS_PER_UPDATE = 3;

/**
 * What to do with an update that came by webhook: `handle` it (new, or left unfinished by an instance that died),
 * answer it again without handling it (`handled` already), or tell Telegram to come back later (`busy`: another
 * delivery of it is being handled now, here or on another instance).
 */
export type UpdateClaim = 'handle' | 'handled' | 'busy';

/**
 * Each Telegram update handled once in webhook mode, across instances (docs/decisions.md, "Each Telegram webhook update
 * is claimed before it is handled").
 * Telegram delivers an update again when its answer was slow or lost; the id is claimed in the shared database before
 * the update is handled, and marked handled after. A claim left unfinished for longer than any handling takes (its
 * instance died mid-update) may be taken again, so a crash still loses nothing.
 */
@Injectable()
export class TelegramUpdatesService {
  private readonly logger = new Logger('Bot');
  private readonly handlingBoundMs: number;
  private prunedAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly repo: TelegramUpdatesRepository,
    private readonly clock: Clock,
    @Inject(SERVER_CONFIG) config: ServerConfig,
  ) {
    this.handlingBoundMs = CALLS_PER_UPDATE * config.telegramTimeoutMs;
  }

  /**
   * Claims update `id`. A database that cannot answer does not hold updates back: the update is handled (at least
   * once, as before this memory existed).
   */
  async claim(id: number): Promise<UpdateClaim> {
    const now = this.clock.now();
    try {
      await this.pruneNowAndThen(now);
      if (await this.repo.claim(id, now, now - this.handlingBoundMs)) return 'handle';
      const seen = await this.repo.seen(id);
      if (seen === 'unseen') return 'handle';
      this.logger.log({ msg: 'telegram update delivered again', update_id: id, state: seen });
      return seen === 'handled' ? 'handled' : 'busy';
    } catch (err) {
      this.logger.warn({ msg: 'telegram update not claimed: handled without the check', update_id: id, error: errorMessage(err) });
      return 'handle';
    }
  }

  /** The handling of a claimed update is over. */
  async handled(id: number): Promise<void> {
    try {
      await this.repo.markHandled(id, this.clock.now());
    } catch (err) {
      // Left unfinished: a delivery again after the handling bound is handled again (at least once).
      this.logger.warn({ msg: 'telegram update not marked handled', update_id: id, error: errorMessage(err) });
    }
  }

  /** Forgets what is older than a day, at most every 10 minutes; a failure only waits for the next time. */
  private async pruneNowAndThen(now: number): Promise<void> {
    if (now - this.prunedAt < PRUNE_EVERY_MS) return;
    this.prunedAt = now;
    try {
      await this.repo.prune(now - UPDATE_MEMORY_MS);
    } catch (err) {
      this.logger.warn({ msg: 'telegram updates not pruned', error: errorMessage(err) });
    }
  }
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
