import { Injectable, Logger } from '@nestjs/common';
import { LeaseService } from '../cluster/lease.service';
import { PassRunner } from '../cluster/pass-runner';
import { Clock } from '../clock/clock';
import { isStorageError, WriteHealth } from '../database/write-health';
import { CardPublisher } from './card-publisher';
import { type CardRefresh, CardRewriter } from './card-rewriter';
import { FallbackAnswerer } from './fallback-answerer';
import { OutboxGate } from './outbox-gate';
import { RepeatNotifier } from './repeat-notifier';
import { passBackoffMs } from './retry-schedule';

export type { CardRefresh } from './card-rewriter';

function errorText(err: unknown): string {
  return err instanceof Error ? (err.stack ?? err.message) : String(err);
}

/**
 * The outbox's runner (docs/requirements.md §4.1, §12.7): passes that never overlap — sends recorded late first, then
 * due cards, marked cards, due repeats —, one more pass when asked during one, a pass when a flood pause ends, the
 * back-off after a failed pass, and the shutdown. What a pass does with each lead is the work's: CardPublisher,
 * CardRewriter, RepeatNotifier, FallbackAnswerer (the replies on late leads' fallback messages). Other
 * features call this class only.
 */
@Injectable()
export class OutboxService {
  private readonly logger = new Logger('Outbox');
  /** No overlap, one more pass when asked during one, the back-off, the `outbox` lease, the stop (cluster/pass-runner.ts). */
  private readonly runner: PassRunner;

  constructor(
    private readonly publisher: CardPublisher,
    private readonly rewriter: CardRewriter,
    private readonly notifier: RepeatNotifier,
    private readonly answerer: FallbackAnswerer,
    private readonly gate: OutboxGate,
    private readonly clock: Clock,
    private readonly writeHealth: WriteHealth,
    leases: LeaseService,
  ) {
    this.runner = new PassRunner({
      clock,
      // Without a bot a pass has nothing to do: it reads nothing and takes no lease.
      enabled: () => gate.hasBot(),
      // Sent but not recorded is this instance's own memory: recorded whoever holds the outbox.
      beforeLease: () => this.recordUnrecorded(),
      // Several instances on one database: one runs passes at a time, the others leave the work to it
      // (and take it over within a minute when it dies).
      lease: { name: 'outbox', leases },
      pass: () => this.pass(),
      backoffMs: passBackoffMs,
      onSuccess: (failedPasses) => this.passSucceeded(failedPasses),
      onFailure: (err, failedPasses, backoff) => this.passFailed(err, failedPasses, backoff),
    });
    gate.onPauseEnd(() => this.publishSoon());
  }

  /** One pass: due leads, then marked cards, then due repeats. A call while a pass runs returns that pass (no overlap). */
  tick(): Promise<void> {
    return this.runner.tick();
  }

  /** After a commit: publish now rather than at the next interval; if a pass is running, one more follows it. */
  publishSoon(): void {
    this.runner.soon();
  }

  /** Resolves when no pass is running (graceful shutdown, tests). */
  whenIdle(): Promise<void> {
    return this.runner.whenIdle();
  }

  /** Shutdown: no new pass starts by itself, and the running one sends nothing more (whenIdle waits for its end). */
  stop(): void {
    this.gate.stop();
    this.runner.stop();
  }

  /**
   * When the outbox last put a card in the group, full, plain or minimal (null: never). Readiness uses it to tell
   * an outbox that makes progress around one poison lead from one that is stuck.
   */
  lastCardPublishedAt(): Promise<number | null> {
    return this.publisher.lastCardPublishedAt();
  }

  /**
   * Rewrites a published card to show its lead as it is now (status line, buttons, anonymisation). A failure
   * leaves the card marked, and the outbox tries again on the retry schedule. Never throws: a database error here
   * is the outbox's (readiness hears of it) and the card is rewritten later.
   */
  async refreshCard(leadId: number): Promise<CardRefresh> {
    try {
      await this.gate.syncFlood();
      return (await this.rewriter.rewrite(leadId)) === 'shown' ? 'shown' : 'later';
    } catch (err) {
      if (isStorageError(err)) this.writeHealth.recordFailure('outbox', err, this.clock.now());
      this.logger.error({ msg: 'card rewrite failed', lead_number: leadId, error: errorText(err) });
      return 'later';
    }
  }

  /** Shutdown: one last try to record what was sent; what still cannot be recorded is logged for ops. */
  async recordSentBeforeShutdown(): Promise<void> {
    const cards = this.publisher.unrecordedCards();
    const pings = this.notifier.unrecordedPings();
    const answers = this.answerer.unrecordedAnswers();
    if (cards.length === 0 && pings.length === 0 && answers.length === 0) return;
    try {
      await this.recordUnrecorded();
    } catch (err) {
      this.logger.error({
        msg: 'sent messages not recorded at shutdown: the next start publishes these cards again',
        cards: this.publisher.unrecordedCards().map((c) => ({ lead_number: c.leadId, chat_id: c.chatId, message_id: c.messageId })),
        pings: this.notifier.unrecordedPings().map((p) => ({ lead_number: p.leadId, repeat_id: p.repeatId, message_id: p.messageId })),
        fallback_replies: this.answerer.unrecordedAnswers().map((a) => ({ lead_number: a.leadId, detail: a.detail })),
        error: errorText(err),
      });
    }
  }

  /** One pass, under the lease: due leads, then marked cards, then due repeats, then the fallback replies. */
  private async pass(): Promise<void> {
    await this.gate.syncFlood();
    if (await this.publisher.publishDue()) {
      await this.rewriter.rewriteDirty();
      await this.notifier.notifyDue();
      await this.answerer.answerDue();
    }
  }

  /** Sent but not recorded: recorded before anything else, and never sent again (§12.7). */
  private async recordUnrecorded(): Promise<void> {
    await this.publisher.recordUnrecorded();
    await this.notifier.recordUnrecorded();
    await this.answerer.recordUnrecorded();
  }

  private passSucceeded(failedPasses: number): void {
    if (failedPasses > 0) this.logger.log({ msg: 'outbox passes succeed again', failed_passes: failedPasses });
    this.writeHealth.recordSuccess('outbox');
  }

  /** A database error or a bug: nothing is marked done, and the next pass waits 5 s, 15 s, then 60 s at most. */
  private passFailed(err: unknown, failedPasses: number, backoff: number): void {
    if (isStorageError(err)) this.writeHealth.recordFailure('outbox', err, this.clock.now());
    this.logger.error({
      msg: 'outbox pass failed',
      failed_passes: failedPasses,
      next_pass_in_sec: backoff / 1000,
      unrecorded_cards: this.publisher.unrecordedCards().length,
      unrecorded_pings: this.notifier.unrecordedPings().length,
      unrecorded_fallback_replies: this.answerer.unrecordedAnswers().length,
      error: errorText(err),
    });
  }
}
