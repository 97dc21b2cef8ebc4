import { type BeforeApplicationShutdown, Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { OnEvent } from '@nestjs/event-emitter';
import { SCHEDULED_JOBS } from '../clock/clock';
import { SERVER_CONFIG } from '../config/config.module';
import type { ServerConfig } from '../config/config';
import { LEAD_ACCEPTED } from '../domain/lead-accepted.event';
import { LEAD_ANONYMISED, LeadAnonymisedEvent } from '../domain/lead-anonymised.event';
import { LEAD_STATUS_CHANGED } from '../domain/lead-status-changed.event';
import { LEAD_MESSAGE } from '../domain/lead-message.event';
import { PassSchedule } from '../cluster/pass-schedule';
import { WebhookRecorder } from '../webhooks/webhook-recorder';
import { OutboxService } from './outbox.service';

/** Thin: the outbox's runner every PUBLISH_INTERVAL_SEC (how the CLI's changes are noticed) and after each announced change. */
@Injectable()
export class OutboxScheduler implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('Outbox');

  constructor(
    @Inject(SERVER_CONFIG) private readonly config: ServerConfig,
    @Inject(SCHEDULED_JOBS) private readonly scheduled: boolean,
    private readonly outbox: OutboxService,
    private readonly recorder: WebhookRecorder,
    private readonly passes: PassSchedule,
  ) {}

  /** Also where the clock is moved by hand (tests, drills): a committed lead is published without waiting for a tick. */
  @OnEvent(LEAD_ACCEPTED)
  leadAccepted(): void {
    this.outbox.publishSoon();
  }

  /** A message of a lead's conversation was stored with its outbox row: sent now. */
  @OnEvent(LEAD_MESSAGE)
  leadMessage(): void {
    this.outbox.publishSoon();
  }

  @OnEvent(LEAD_STATUS_CHANGED)
  statusChanged(): void {
    this.outbox.webhooksSoon();
  }

  /** The server erased a lead and said why: `lead.anonymised` carries the reason. */
  @OnEvent(LEAD_ANONYMISED)
  leadAnonymised(event: LeadAnonymisedEvent): void {
    if (this.config.webhooks.length > 0) this.recorder.noteAnonymised(event.leadNumber, event.reason);
    this.outbox.publishSoon();
  }

  async onApplicationBootstrap(): Promise<void> {
    if (this.config.webhooks.length > 0) await this.recorder.start();
    if (!this.scheduled) return;
    this.passes.every('outbox', this.config.publishIntervalSec * 1000, () => this.outbox.tick());
    this.outbox.publishSoon();
    this.logger.log(`outbox every ${this.config.publishIntervalSec} s`);
  }

  /** Graceful shutdown: no new pass starts; the running one finishes before the database closes. */
  async beforeApplicationShutdown(): Promise<void> {
    await this.passes.end('outbox', async () => {
      this.outbox.stop();
      await this.outbox.whenIdle();
      await this.outbox.recordSentBeforeShutdown();
    });
  }
}
