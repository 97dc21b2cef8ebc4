import { Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { Clock } from '../clock/clock';
import { OutboxService } from '../outbox/outbox.service';
import { DatabaseMaintenanceRepository } from '../repositories/database-maintenance.repository';
import { LeadsRepository } from '../repositories/leads.repository';
import { LeadErasureRepository, type AnonymiseResult } from '../repositories/lead-erasure.repository';
import { Transactor } from '../repositories/transactor';
import { ContactEraser, type Contact } from './contact';
import { ContactHasher } from './contact-hasher';
import { LEAD_ANONYMISED, type LeadAnonymisedEvent } from '../domain/events';
import { DAY_MS } from '../clock/local-time';

const CHECKPOINT_RETRY_MS = 1000;

/** docs/requirements.md §7.4: every personal field erased, the card rewritten, the lead kept for statistics. */
@Injectable()
export class AnonymisationService implements OnApplicationShutdown {
  private readonly logger = new Logger('Anonymisation');
  private checkpointRetry: NodeJS.Timeout | null = null;
  private readonly eraser: ContactEraser;

  constructor(
    private readonly leads: LeadErasureRepository,
    events: LeadsRepository,
    transactor: Transactor,
    hasher: ContactHasher,
    private readonly maintenance: DatabaseMaintenanceRepository,
    private readonly outbox: OutboxService,
    private readonly clock: Clock,
    private readonly emitter: EventEmitter2,
  ) {
    this.eraser = new ContactEraser(leads, events, transactor, hasher);
  }

  /** Erases every lead (and repeat) of a phone or a username, rewrites their cards; the numbers erased, oldest first. */
  async forgetContact(contact: Contact): Promise<number[]> {
    const now = this.clock.now();
    const erased = await this.eraser.erase(contact, now);
    if (erased.length > 0)
      await this.forgotten(erased, 'contact', now, { msg: 'contact anonymised', lead_numbers: erased, by: contact.kind });
    return erased;
  }

  async forget(leadId: number): Promise<AnonymiseResult> {
    const result = await this.eraser.eraseLead(leadId, this.clock.now(), { detail: 'personal fields erased', record: true });
    if (result === 'done') await this.forgotten([leadId], 'number', this.clock.now(), { msg: 'lead anonymised', lead_number: leadId });
    return result;
  }

  /** After `/stickers_forget`: the checkpoint, the log line, the events, the cards rewritten. */
  private async forgotten(ids: number[], reason: 'contact' | 'number', at: number, line: Record<string, unknown>): Promise<void> {
    this.afterErase();
    this.logger.log({ ...line, reason: 'stickers_forget' });
    for (const id of ids) this.announce(id, reason, at);
    for (const id of ids) await this.outbox.refreshCard(id);
  }

  private announce(leadId: number, reason: LeadAnonymisedEvent['reason'], at: number): void {
    this.emitter.emit(LEAD_ANONYMISED, { leadNumber: leadId, reason, at } satisfies LeadAnonymisedEvent);
  }

  /** Anonymises every lead older than the retention period, in batches; returns how many. */
  async applyRetention(retentionDays: number): Promise<number> {
    const cutoff = this.clock.now() - retentionDays * DAY_MS;
    let total = 0;
    for (;;) {
      const ids = await this.leads.expired(cutoff, 100);
      if (ids.length === 0) break;
      for (const id of ids) {
        if ((await this.eraser.eraseLead(id, this.clock.now(), { detail: 'personal fields erased', record: false })) !== 'done') continue;
        total += 1;
        this.announce(id, 'retention', this.clock.now());
      }
    }
    if (total > 0) {
      this.afterErase();
      this.logger.log({ msg: 'retention applied', anonymised: total, retention_days: retentionDays });
      this.outbox.publishSoon();
    }
    return total;
  }

  /** The WAL holds the erased values until a truncating checkpoint, which a reader (a backup) can hold off: retried. */
  private afterErase(): void {
    if (this.maintenance.isClosed || this.maintenance.checkpointTruncate()) return;
    if (this.checkpointRetry) return;
    this.logger.warn({ msg: 'checkpoint after anonymisation held off by a reader; trying again every second' });
    this.checkpointRetry = setInterval(() => {
      if (this.maintenance.isClosed || !this.maintenance.checkpointTruncate()) return;
      this.onApplicationShutdown();
      this.logger.log({ msg: 'checkpoint after anonymisation done' });
    }, CHECKPOINT_RETRY_MS);
    this.checkpointRetry.unref();
  }

  /** Also when the retried checkpoint went through; at shutdown the database's close checkpoints anyway. */
  onApplicationShutdown(): void {
    if (this.checkpointRetry) clearInterval(this.checkpointRetry);
    this.checkpointRetry = null;
  }
}
