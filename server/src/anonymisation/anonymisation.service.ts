import { Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { Clock } from '../clock/clock';
import { OutboxService } from '../outbox/outbox.service';
import { DatabaseMaintenanceRepository } from '../repositories/database-maintenance.repository';
import { ErasedContactsRepository } from '../repositories/erased-contacts.repository';
import { LeadEventsRepository } from '../repositories/lead-events.repository';
import { LeadErasureRepository, type AnonymiseResult } from '../repositories/lead-erasure.repository';
import { Transactor } from '../repositories/transactor';
import { ContactEraser, type Contact, type EraseOptions } from './contact';
import { ContactHasher } from './contact-hasher';
import { LEAD_ANONYMISED, LeadAnonymisedEvent } from '../domain/lead-anonymised.event';

const CHECKPOINT_RETRY_MS = 1000;

/**
 * docs/requirements.md §7.4: anonymisation erases every personal field (domain/personal-fields.ts), rewrites the card,
 * keeps the lead for statistics; an erasure someone asked for is also recorded (hashed) against late replays.
 */
@Injectable()
export class AnonymisationService implements OnApplicationShutdown {
  private readonly logger = new Logger('Anonymisation');
  /** A truncating checkpoint that a reader (an online backup) held off, tried again until it goes through. */
  private checkpointRetry: NodeJS.Timeout | null = null;
  private readonly eraser: ContactEraser;

  constructor(
    private readonly leads: LeadErasureRepository,
    events: LeadEventsRepository,
    transactor: Transactor,
    erased: ErasedContactsRepository,
    hasher: ContactHasher,
    private readonly maintenance: DatabaseMaintenanceRepository,
    private readonly outbox: OutboxService,
    private readonly clock: Clock,
    private readonly emitter: EventEmitter2,
  ) {
    this.eraser = new ContactEraser(leads, events, transactor, erased, hasher);
  }

  /**
   * Erases every lead (and every repeat) of a phone or a username, rewrites their cards; the numbers of the
   * leads erased, oldest first (none when nobody was found).
   */
  async forgetContact(contact: Contact): Promise<number[]> {
    const now = this.clock.now();
    const erased = await this.eraser.erase(contact, now);
    if (erased.length === 0) return erased;
    this.afterErase();
    this.logger.log({ msg: 'contact anonymised', lead_numbers: erased, by: contact.kind, reason: 'stickers_forget' });
    for (const id of erased) this.announce(id, 'contact', now);
    for (const id of erased) await this.outbox.refreshCard(id);
    return erased;
  }

  private announce(leadId: number, reason: LeadAnonymisedEvent['reason'], at: number): void {
    this.emitter.emit(LEAD_ANONYMISED, new LeadAnonymisedEvent(leadId, reason, at));
  }

  async forget(leadId: number): Promise<AnonymiseResult> {
    const result = await this.anonymise(leadId, { detail: 'personal fields erased', record: true });
    if (result === 'done') {
      this.afterErase();
      this.logger.log({ msg: 'lead anonymised', lead_number: leadId, reason: 'stickers_forget' });
      this.announce(leadId, 'number', this.clock.now());
      await this.outbox.refreshCard(leadId);
    }
    return result;
  }

  /** Anonymises every lead older than the retention period, in batches; returns how many. */
  async applyRetention(retentionDays: number): Promise<number> {
    const cutoff = this.clock.now() - retentionDays * 24 * 60 * 60 * 1000;
    let total = 0;
    for (;;) {
      const ids = await this.leads.expired(cutoff, 100);
      if (ids.length === 0) break;
      for (const id of ids) {
        if ((await this.anonymise(id, { detail: 'personal fields erased', record: false })) !== 'done') continue;
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

  /** The erase and the lead's `anonymised` event commit together: the trace shows an erase exactly when it happened. */
  private anonymise(leadId: number, options: EraseOptions): Promise<AnonymiseResult> {
    return this.eraser.eraseLead(leadId, this.clock.now(), options);
  }

  /**
   * Old page images in the WAL still hold the erased values until a truncating checkpoint. A reader (an online
   * backup, another process) can hold it off: then it is tried again every second until it goes through, so the
   * values never outlive the reader.
   */
  private afterErase(): void {
    if (this.maintenance.isClosed || this.maintenance.checkpointTruncate()) return;
    if (this.checkpointRetry) return;
    this.logger.warn({ msg: 'checkpoint after anonymisation held off by a reader; trying again every second' });
    this.checkpointRetry = setInterval(() => {
      if (this.maintenance.isClosed || !this.maintenance.checkpointTruncate()) return;
      this.stopRetry();
      this.logger.log({ msg: 'checkpoint after anonymisation done' });
    }, CHECKPOINT_RETRY_MS);
    this.checkpointRetry.unref();
  }

  private stopRetry(): void {
    if (this.checkpointRetry) clearInterval(this.checkpointRetry);
    this.checkpointRetry = null;
  }

  onApplicationShutdown(): void {
    // The database closes after this; closing it checkpoints the WAL anyway when no reader is left.
    this.stopRetry();
  }
}
