import { Inject, Injectable, Logger } from '@nestjs/common';
import { LeaseService } from '../cluster/lease.service';
import { PassRunner } from '../cluster/pass-runner';
import { Clock } from '../clock/clock';
import { SERVER_CONFIG } from '../config/config.module';
import type { ServerConfig } from '../config/config';
import { passBackoffMs } from '../outbox/retry-schedule';
import { WebhookDeliveriesRepository } from '../repositories/webhook-deliveries.repository';
import { endpointOrigin } from './webhook-alerts';
import { WebhookDeliverer } from './webhook-deliverer';
import { type AnonymisedReason, WebhookRecorder } from './webhook-recorder';
import { withoutUrls } from './webhook.sender';

/** A failed pass's error for the log: never a URL (an endpoint's path or query may hold a token). */
function errorText(err: unknown): string {
  return withoutUrls(err instanceof Error ? (err.stack ?? err.message) : String(err));
}

/**
 * Signed webhooks (docs/requirements.md §14.8): the runner of their outbox. A pass records the events of
 * changes stored since the last one, then sends the due deliveries. Passes never overlap; one asked for during a pass
 * follows it; a failed pass (a database error) backs off 5 s, 15 s, then 60 s. With several instances on one database
 * only the holder of the `webhooks` lease runs passes (its own lease: a Telegram outage or flood pause, which stops
 * the outbox's passes, never holds webhooks back). Without LEADS_WEBHOOK_URL nothing runs.
 */
@Injectable()
export class WebhooksService {
  private readonly logger = new Logger('Webhooks');
  /** No overlap, one more pass when asked during one, the back-off, the `webhooks` lease, the stop (cluster/pass-runner.ts). */
  private readonly runner: PassRunner;

  constructor(
    @Inject(SERVER_CONFIG) private readonly config: ServerConfig,
    private readonly recorder: WebhookRecorder,
    private readonly deliverer: WebhookDeliverer,
    private readonly repo: WebhookDeliveriesRepository,
    leases: LeaseService,
    clock: Clock,
  ) {
    this.runner = new PassRunner({
      clock,
      enabled: () => this.enabled,
      lease: { name: 'webhooks', leases },
      // More due than one pass sends: the next pass follows at once.
      pass: async () => {
        await this.recorder.recordNew();
        return this.deliverer.deliverDue(() => this.runner.stopped);
      },
      backoffMs: passBackoffMs,
      onSuccess: (failedPasses) => {
        if (failedPasses > 0) this.logger.log({ msg: 'webhook passes succeed again', failed_passes: failedPasses });
      },
      onFailure: (err, failedPasses, backoff) =>
        this.logger.error({
          msg: 'webhook pass failed',
          failed_passes: failedPasses,
          next_pass_in_sec: backoff / 1000,
          error: errorText(err),
        }),
    });
  }

  get enabled(): boolean {
    return this.config.webhooks.length > 0;
  }

  /** At start: where announcements begin (first configuration only), and what waits for an endpoint no longer set. */
  async start(): Promise<void> {
    if (!this.enabled) return;
    await this.recorder.start();
    const endpoints = this.config.webhooks.map((e) => e.url);
    this.logger.log({ msg: `webhooks to ${endpoints.length} endpoint(s)`, endpoints: endpoints.map(endpointOrigin) });
    const orphaned = await this.repo.waitingForOtherEndpoints(endpoints);
    if (orphaned > 0)
      this.logger.warn({
        msg: 'webhook deliveries wait for endpoints no longer in LEADS_WEBHOOK_URL: they are not sent',
        deliveries: orphaned,
      });
  }

  /** One pass (a call while one runs returns that pass). */
  tick(): Promise<void> {
    return this.runner.tick();
  }

  /** After a commit: a pass now rather than at the next interval; during a pass, one more follows it. */
  soon(): void {
    this.runner.soon();
  }

  /** The server erased a lead and said why: `lead.anonymised` carries the reason. */
  anonymised(leadId: number, reason: AnonymisedReason): void {
    if (!this.enabled) return;
    this.recorder.noteAnonymised(leadId, reason);
    this.soon();
  }

  /** Resolves when no pass is running (graceful shutdown, tests). */
  whenIdle(): Promise<void> {
    return this.runner.whenIdle();
  }

  /** Shutdown: no new pass, and a running one stops after the delivery it is sending. */
  stop(): void {
    this.runner.stop();
  }
}
