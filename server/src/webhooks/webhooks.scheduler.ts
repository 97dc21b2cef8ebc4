import { type BeforeApplicationShutdown, Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { OnEvent } from '@nestjs/event-emitter';
import { LEAD_ANONYMISED, LeadAnonymisedEvent } from '../domain/lead-anonymised.event';
import { SCHEDULED_JOBS } from '../clock/clock';
import { PassSchedule } from '../cluster/pass-schedule';
import { SERVER_CONFIG } from '../config/config.module';
import type { ServerConfig } from '../config/config';
import { LEAD_ACCEPTED } from '../domain/lead-accepted.event';
import { LEAD_STATUS_CHANGED } from '../domain/lead-status-changed.event';
import { WebhooksService } from './webhooks.service';

/**
 * Thin: a webhook pass every PUBLISH_INTERVAL_SEC (also the only way a CLI `forget` or `webhooks replay` is noticed)
 * and right after each change another feature announces. The events only wake the pass; what it sends comes from
 * the stored changes.
 */
@Injectable()
export class WebhooksScheduler implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('Webhooks');

  constructor(
    @Inject(SERVER_CONFIG) private readonly config: ServerConfig,
    @Inject(SCHEDULED_JOBS) private readonly scheduled: boolean,
    private readonly webhooks: WebhooksService,
    private readonly passes: PassSchedule,
  ) {}

  @OnEvent(LEAD_ACCEPTED)
  leadAccepted(): void {
    this.webhooks.soon();
  }

  @OnEvent(LEAD_STATUS_CHANGED)
  statusChanged(): void {
    this.webhooks.soon();
  }

  @OnEvent(LEAD_ANONYMISED)
  leadAnonymised(event: LeadAnonymisedEvent): void {
    this.webhooks.anonymised(event.leadNumber, event.reason);
  }

  async onApplicationBootstrap(): Promise<void> {
    if (!this.webhooks.enabled) return;
    await this.webhooks.start();
    if (!this.scheduled) return;
    this.passes.every('webhooks', this.config.publishIntervalSec * 1000, () => this.webhooks.tick());
    this.webhooks.soon();
    this.logger.log(`webhook passes every ${this.config.publishIntervalSec} s`);
  }

  /** Graceful shutdown: no new pass; the running one ends after its current delivery; the lease goes to another instance. */
  async beforeApplicationShutdown(): Promise<void> {
    if (!this.webhooks.enabled) return;
    await this.passes.end('webhooks', async () => {
      this.webhooks.stop();
      await this.webhooks.whenIdle();
    });
  }
}
