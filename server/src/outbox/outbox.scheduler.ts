import { type BeforeApplicationShutdown, Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { OnEvent } from '@nestjs/event-emitter';
import { SCHEDULED_JOBS } from '../clock/clock';
import { SERVER_CONFIG } from '../config/config.module';
import type { ServerConfig } from '../config/config';
import { LEAD_ACCEPTED } from '../domain/lead-accepted.event';
import { PassSchedule } from '../cluster/pass-schedule';
import { OutboxService } from './outbox.service';

/** Thin: runs the outbox every PUBLISH_INTERVAL_SEC and right after each accepted lead. */
@Injectable()
export class OutboxScheduler implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('Outbox');

  constructor(
    @Inject(SERVER_CONFIG) private readonly config: ServerConfig,
    @Inject(SCHEDULED_JOBS) private readonly scheduled: boolean,
    private readonly outbox: OutboxService,
    private readonly passes: PassSchedule,
  ) {}

  /** Also where the clock is moved by hand (tests, drills): a committed lead is published without waiting for a tick. */
  @OnEvent(LEAD_ACCEPTED)
  leadAccepted(): void {
    this.outbox.publishSoon();
  }

  onApplicationBootstrap(): void {
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
