import { type BeforeApplicationShutdown, Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { OnEvent } from '@nestjs/event-emitter';
import { SchedulerRegistry } from '@nestjs/schedule';
import { SCHEDULED_JOBS } from '../clock/clock';
import { SERVER_CONFIG } from '../config/config.module';
import type { ServerConfig } from '../config/config';
import { LEAD_ACCEPTED } from '../leads/lead-accepted.event';
import { LeaseService } from '../cluster/lease.service';
import { OutboxService } from './outbox.service';

/** Thin: runs the outbox every PUBLISH_INTERVAL_SEC and right after each accepted lead. */
@Injectable()
export class OutboxScheduler implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('Outbox');

  constructor(
    @Inject(SERVER_CONFIG) private readonly config: ServerConfig,
    @Inject(SCHEDULED_JOBS) private readonly scheduled: boolean,
    private readonly outbox: OutboxService,
    private readonly registry: SchedulerRegistry,
    private readonly leases: LeaseService,
  ) {}

  /** Also where the clock is moved by hand (tests, drills): a committed lead is published without waiting for a tick. */
  @OnEvent(LEAD_ACCEPTED)
  leadAccepted(): void {
    this.outbox.publishSoon();
  }

  onApplicationBootstrap(): void {
    if (!this.scheduled) return;
    const interval = setInterval(() => void this.outbox.tick(), this.config.publishIntervalSec * 1000);
    this.registry.addInterval('outbox', interval);
    this.outbox.publishSoon();
    this.logger.log(`outbox every ${this.config.publishIntervalSec} s`);
  }

  /** Graceful shutdown: no new pass starts; the running one finishes before the database closes. */
  async beforeApplicationShutdown(): Promise<void> {
    this.outbox.stop();
    if (this.registry.doesExist('interval', 'outbox')) this.registry.deleteInterval('outbox');
    await this.outbox.whenIdle();
    await this.outbox.recordSentBeforeShutdown();
    // After the last pass: another instance (or this one restarted) takes the outbox at once.
    await this.leases.release('outbox').catch(() => undefined);
  }
}
