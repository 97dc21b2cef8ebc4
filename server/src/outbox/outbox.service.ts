import { type BeforeApplicationShutdown, Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { OnEvent } from '@nestjs/event-emitter';
import { LeadsChatService } from '../chats/leads-chat.service';
import { holderIsDead, LeaseService } from '../cluster/lease.service';
import { PassRunner } from '../cluster/pass-runner';
import { Clock, SCHEDULED_JOBS } from '../clock/clock';
import { SERVER_CONFIG } from '../config/config.module';
import type { ServerConfig } from '../config/config';
import type { OutboxKind } from '../database/schema';
import { LEAD_ACCEPTED, LEAD_ANONYMISED, LEAD_MESSAGE, LEAD_STATUS_CHANGED, type LeadAnonymisedEvent } from '../domain/events';
import { isStorageError, WriteHealth } from '../database/write-health';
import { Metrics } from '../observability/metrics';
import { type OutboxRow, OutboxRepository, TELEGRAM_TARGET } from '../repositories/outbox.repository';
import { WebhookDeliverer } from '../webhooks/webhook-deliverer';
import { WebhookRecorder } from '../webhooks/webhook-recorder';
import { withoutUrls } from '../webhooks/webhook.sender';
import { CardPublisher } from './card-publisher';
import { CardRewriter } from './card-rewriter';
import { FallbackAnswerer } from './fallback-answerer';
import { OutboxGate } from './outbox-gate';
import type { Outcome, OutboxHandler } from './outcome';
import { RepeatNotifier } from './repeat-notifier';
import { BATCH_SIZE, PASS_BACKOFF_MS, PASS_FAILURE_LOG_EVERY } from './retry-schedule';
import { MessageSender } from './message-senders';

/** A button's rewrite: 'shown' when the card in Telegram shows the lead as stored; 'later' when the outbox tries again. */
export type CardRefresh = 'shown' | 'later';

/** A pass takes up to BATCH_SIZE rows of each Telegram kind, in this order (a ping follows the card it published). */
const TELEGRAM_KINDS: OutboxKind[] = ['card', 'card_edit', 'repeat_ping', 'fallback_reply', 'visitor_message', 'team_message'];
/** An endpoint's rows claimed at a time, and claims per pass. */
const WEBHOOK_BATCH = 10;
const WEBHOOK_ROUNDS = 10;
/** How long a claim lasts (wall clock); renewed before each attempt, so a slow lane never loses its rows. */
const CLAIM_MS = 60_000;

/** A storage error by its message (the database is away: no bug to trace); any other with its stack. */
function errorText(err: unknown): string {
  if (!(err instanceof Error)) return withoutUrls(String(err));
  return withoutUrls(isStorageError(err) ? err.message : (err.stack ?? err.message));
}

/** The outbox's one runner (docs/architecture.md, "The outbox"): claimed rows sent by their kind's handler, a lane per target. */
@Injectable()
export class OutboxService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('Outbox');
  private readonly runner: PassRunner;
  private readonly lanes = new Map<string, PassRunner>();
  private readonly handlers: Record<OutboxKind, OutboxHandler>;
  /** Outcomes of sends whose record failed: recorded first, never sent again. */
  private readonly unrecorded = new Map<number, { row: OutboxRow; outcome: Outcome }>();
  /** The rows being attempted in this instance, and the attempt's end: a button's rewrite and a pass never both send one. */
  private readonly inFlight = new Map<number, Promise<unknown>>();
  private ticking: Promise<void> | null = null;
  /** Whether the runner's next pass wakes the Telegram lane (a tick, a new lead, a flood pause over; not a status change). */
  private wakeTelegram = false;

  constructor(
    @Inject(SERVER_CONFIG) private readonly config: ServerConfig,
    private readonly repo: OutboxRepository,
    private readonly gate: OutboxGate,
    private readonly chats: LeadsChatService,
    publisher: CardPublisher,
    private readonly rewriter: CardRewriter,
    private readonly recorder: WebhookRecorder,
    private readonly leases: LeaseService,
    private readonly clock: Clock,
    private readonly writeHealth: WriteHealth,
    private readonly metrics: Metrics,
    notifier: RepeatNotifier,
    answerer: FallbackAnswerer,
    deliverer: WebhookDeliverer,
    messages: MessageSender,
    @Inject(SCHEDULED_JOBS) private readonly scheduled: boolean,
  ) {
    this.handlers = {
      card: publisher,
      card_edit: rewriter,
      repeat_ping: notifier,
      fallback_reply: answerer,
      webhook: deliverer,
      visitor_message: messages,
      team_message: messages,
    };
    this.runner = this.passRunner('outbox', () => this.pass(), { enabled: () => this.config.webhooks.length > 0 || gate.hasBot() });
    const telegram = this.passRunner('telegram', () => this.telegramPass(), { enabled: () => gate.hasBot() });
    this.lanes.set(TELEGRAM_TARGET, telegram);
    gate.onPauseEnd = () => this.publishSoon();
  }

  /** A lane's runner: a failed pass leaves what failed due and backs off 5 s; the failure is logged once a minute. */
  private passRunner(lane: string, pass: () => Promise<void>, options: { enabled?: () => boolean } = {}): PassRunner {
    return new PassRunner({
      ...options,
      clock: this.clock,
      pass,
      backoffMs: () => PASS_BACKOFF_MS,
      onSuccess: (failedPasses) => {
        if (failedPasses > 0) this.logger.log({ msg: 'outbox passes succeed again', lane, failed_passes: failedPasses });
        this.writeHealth.recordSuccess('outbox');
      },
      onFailure: (err, failedPasses, backoff) => {
        if (isStorageError(err)) this.writeHealth.recordFailure('outbox', err, this.clock.now());
        if ((failedPasses - 1) % PASS_FAILURE_LOG_EVERY !== 0) return;
        const log = { lane, failed_passes: failedPasses, next_pass_in_sec: backoff / 1000, unrecorded_sends: this.unrecorded.size };
        this.logger.error({ msg: 'outbox pass failed', ...log, error: errorText(err) });
      },
    });
  }

  /** Every PUBLISH_INTERVAL_SEC (how the CLI's changes are noticed). */
  async onApplicationBootstrap(): Promise<void> {
    if (this.config.webhooks.length > 0) await this.recorder.start();
    if (!this.scheduled) return;
    this.leases.every('outbox', this.config.publishIntervalSec * 1000, () => this.tick());
    this.publishSoon();
    this.logger.log(`outbox every ${this.config.publishIntervalSec} s`);
  }

  /** Graceful shutdown: the running passes finish, then one last try to record what was sent (else logged for ops). */
  async beforeApplicationShutdown(): Promise<void> {
    await this.leases.end('outbox', async () => {
      this.stop();
      await this.whenIdle();
      await this.recordUnrecorded().catch((err) =>
        this.logger.error({
          msg: 'sent messages not recorded at shutdown: the next start sends these again',
          rows: [...this.unrecorded.values()].map(({ row }) => ({ kind: row.kind, lead_number: row.lead_id, row: row.id })),
          error: errorText(err),
        }),
      );
    });
  }

  @OnEvent(LEAD_ANONYMISED)
  leadAnonymised(event: LeadAnonymisedEvent): void {
    if (this.config.webhooks.length > 0) this.recorder.noteAnonymised(event.leadNumber, event.reason);
    this.publishSoon();
  }

  /** A pass of the runner and of every lane it wakes; resolves when they are all over. A call meanwhile gets the same. */
  tick(): Promise<void> {
    this.wakeTelegram = true;
    this.ticking ??= (async () => {
      await this.runner.tick();
      await this.whenIdle();
    })().finally(() => (this.ticking = null));
    return this.ticking;
  }

  /** After a commit (a lead, a message): a pass now, or one more after the running one. Also tests' and drills' hook. */
  @OnEvent(LEAD_ACCEPTED)
  @OnEvent(LEAD_MESSAGE)
  publishSoon(): void {
    this.wakeTelegram = true;
    this.runner.soon();
  }

  /** A status change: the webhook lanes only (the press rewrites its card itself, and must not meet the Telegram lane). */
  @OnEvent(LEAD_STATUS_CHANGED)
  webhooksSoon(): void {
    if (this.config.webhooks.length > 0) this.runner.soon();
  }

  /** Resolves when neither the runner nor a lane runs a pass (graceful shutdown, tests). */
  async whenIdle(): Promise<void> {
    const runners = [this.runner, ...this.lanes.values()];
    while (runners.some((r) => r.busy)) await Promise.all(runners.map((r) => r.whenIdle()));
  }

  /** Shutdown: no new pass starts by itself, and the running ones send nothing more (whenIdle waits for their end). */
  stop(): void {
    this.gate.stop();
    this.runner.stop();
    for (const lane of this.lanes.values()) lane.stop();
  }

  /** A button press: the card rewritten now by its waiting edit row, whatever its time. Never throws (readiness hears). */
  async refreshCard(leadId: number): Promise<CardRefresh> {
    try {
      await this.gate.syncFlood();
      if (!this.gate.ready()) return 'later';
      let outcome: Outcome | null = null;
      // A second try when the lane was rewriting the card meanwhile: the change it may not have shown yet.
      for (let tries = 0; tries < 2 && outcome === null; tries += 1) {
        const [row] = await this.claim(TELEGRAM_TARGET, 1, 'card_edit', { leadId, anyTime: true });
        if (!row) break;
        outcome = await this.attempt(row);
      }
      if (outcome && !('done' in outcome)) return 'later';
      return (await this.rewriter.shows(leadId)) ? 'shown' : 'later';
    } catch (err) {
      if (isStorageError(err)) this.writeHealth.recordFailure('outbox', err, this.clock.now());
      this.logger.error({ msg: 'card rewrite failed', lead_number: leadId, error: errorText(err) });
      return 'later';
    }
  }

  /** The runner's pass: dead instances' claims freed, new webhook events recorded, a lane per endpoint; then the lanes. */
  private async pass(): Promise<void> {
    for (const holder of await this.repo.holders(this.leases.instanceId))
      if (holderIsDead(holder, this.leases.instanceId)) await this.repo.release(holder);
    if (this.config.webhooks.length > 0) await this.recorder.recordNew();
    for (const { url } of this.config.webhooks) {
      const lane = this.lanes.get(url) ?? this.passRunner('webhook', () => this.endpointPass(url));
      this.lanes.set(url, lane);
    }
    for (const [target, lane] of this.lanes) if (target !== TELEGRAM_TARGET) lane.soon();
    if (this.wakeTelegram) this.lanes.get(TELEGRAM_TARGET)!.soon();
    this.wakeTelegram = false;
  }

  /** Telegram rows go out: a bot, no flood pause (shared by every instance), a leads chat. */
  private async telegramPass(): Promise<void> {
    await this.recordUnrecorded(TELEGRAM_TARGET);
    if (!this.gate.hasBot()) return;
    await this.gate.syncFlood();
    if (!this.gate.ready()) return;
    if (!(await this.chats.leadsChatId())) return this.gate.pausedOnce('publishing paused: LEADS_CHAT_ID is not set (leads are stored)');
    for (const kind of TELEGRAM_KINDS) {
      if (this.gate.stopped || !this.gate.ready()) return;
      const rows = await this.claim(TELEGRAM_TARGET, BATCH_SIZE, kind);
      if (rows.length > 0 && !(await this.runLane(rows))) return;
    }
  }

  /** An endpoint's due deliveries, a batch at a time (a delivered event frees its lead's next), until one finds it down. */
  private async endpointPass(url: string): Promise<void> {
    await this.recordUnrecorded(url);
    for (let round = 0; round < WEBHOOK_ROUNDS && !this.gate.stopped; round += 1) {
      const rows = await this.claim(url, WEBHOOK_BATCH, 'webhook');
      if (rows.length === 0 || !(await this.runLane(rows))) return;
    }
  }

  private claim(target: string, limit: number, kind: OutboxKind, only: { leadId?: number; anyTime?: boolean } = {}): Promise<OutboxRow[]> {
    const wallNow = Date.now();
    const times = { now: this.clock.now(), wallNow, until: wallNow + CLAIM_MS };
    return this.repo.claim({ ...times, holder: this.leases.instanceId, target, limit, kind, ...only });
  }

  /** A lane's rows in turn (false: stopped, the rest given back); a claim past half its time is renewed or the row skipped. */
  private async runLane(rows: OutboxRow[]): Promise<boolean> {
    const holder = this.leases.instanceId;
    const claimedAt = Date.now();
    const ids = rows.map((r) => r.id);
    const release = (from: number) => this.repo.release(holder, ids.slice(from));
    for (let i = 0; i < rows.length; i += 1) {
      const row = rows[i];
      const telegram = row.target === TELEGRAM_TARGET;
      // Before each Bot API call, a pause another instance got meanwhile.
      if (telegram) await this.gate.syncFlood();
      const halted = this.gate.stopped || (telegram && !this.gate.ready());
      const stale = Date.now() - claimedAt > CLAIM_MS / 2;
      if (halted || (stale && !(await this.repo.extendClaim(row.id, holder, Date.now() + CLAIM_MS)))) {
        if (!halted) continue;
        await release(i);
        return false;
      }
      const outcome = await this.attempt(row);
      if (outcome?.stop) {
        await release(i + 1);
        return false;
      }
    }
    return true;
  }

  /** The row's attempt; null when it was not made here (already running: after its end; or only to be recorded). */
  private async attempt(row: OutboxRow): Promise<Outcome | null> {
    const running = this.inFlight.get(row.id);
    const sent = this.unrecorded.get(row.id);
    if (running) await running.catch(() => undefined);
    else if (sent) await this.record(sent.row, sent.outcome);
    if (running || sent) return null;
    const attempt = (async () => {
      const outcome = await this.handlers[row.kind].handle(row);
      // Kept until its record is written: what was sent is never sent again for a failed write.
      this.unrecorded.set(row.id, { row, outcome });
      await this.record(row, outcome);
      return outcome;
    })();
    this.inFlight.set(row.id, attempt);
    return attempt.finally(() => this.inFlight.delete(row.id));
  }

  private async record(row: OutboxRow, outcome: Outcome): Promise<void> {
    const now = this.clock.now();
    await outcome.record?.();
    if ('done' in outcome) await this.repo.finish(row.id, outcome.done, now, outcome.attempts ?? row.attempts);
    else if ('failed' in outcome) {
      await this.repo.failed(row.id, outcome.failed);
      this.metrics.inc('outbox_attempt_failures_total', { kind: row.kind });
    } else if ('defer' in outcome) await this.repo.defer(row.id, outcome.defer, outcome.error);
    else await this.repo.requeue(row, now);
    this.unrecorded.delete(row.id);
  }

  /** What was sent and not recorded, of one target (each lane's first step) or of all. */
  private async recordUnrecorded(target?: string): Promise<void> {
    for (const { row, outcome } of [...this.unrecorded.values()])
      if (target === undefined || row.target === target) await this.record(row, outcome);
  }
}
