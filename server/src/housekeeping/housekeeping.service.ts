import { type BeforeApplicationShutdown, Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { LATE_MAX_AGE_MS, errorText } from '@stickers/shared';
import { AlertsService } from '../alerts/alerts.service';
import { AnonymisationService } from '../anonymisation/anonymisation.service';
import { LeadsChatService } from '../chats/leads-chat.service';
import { Clock, SCHEDULED_JOBS } from '../clock/clock';
import { isStorageError } from '../database/write-health';
import { LeaseService } from '../cluster/lease.service';
import { PassRunner } from '../cluster/pass-runner';
import { SERVER_CONFIG } from '../config/config.module';
import type { ServerConfig } from '../config/config';
import { SECRET_FAILURE_WINDOW_MS } from '../access/secret-lockout';
import { LeadErasureRepository } from '../repositories/lead-erasure.repository';
import { SettingsRepository } from '../repositories/settings.repository';
import { LeadsRepository } from '../repositories/leads.repository';
import { RateEventsRepository } from '../repositories/rate-events.repository';
import { ChartsService } from '../charts/charts.service';
import { ReportsService } from '../reports/reports.service';
import { TelegramGateway } from '../telegram/telegram.gateway';
import type { TelegramFailure } from '../telegram/telegram-result';
import { MESSAGES } from '../i18n/i18n.module';
import type { Messages } from '../i18n';
import { localDate, localWallTime } from '../clock/local-time';

const HOUR = 60 * 60 * 1000;
/** What Telegram may take later (a 5xx or no answer, flood control, no bot): the reminder is given back. */
const AGAIN = new Set<TelegramFailure['kind']>(['failed', 'flood', 'no_bot']);

interface HousekeepingReport {
  reminders: number;
  digest: boolean;
  anonymised: number;
  pruned: number;
  /** False when another instance holds housekeeping now: nothing was done here. */
  ran: boolean;
}

/** docs/requirements.md §7, once a minute (no overlap; a failed job tries again): reminders, digest, retention, pruning. */
@Injectable()
export class HousekeepingService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('Housekeeping');
  private readonly runner: PassRunner;
  /** The report of the run that ended last (null while none has, or when it threw). */
  private report: HousekeepingReport | null = null;

  constructor(
    @Inject(SERVER_CONFIG) private readonly config: ServerConfig,
    private readonly leads: LeadsRepository,
    private readonly jobRuns: SettingsRepository,
    private readonly rateEvents: RateEventsRepository,
    private readonly anonymisation: AnonymisationService,
    private readonly reports: ReportsService,
    private readonly telegram: TelegramGateway,
    private readonly clock: Clock,
    private readonly leases: LeaseService,
    private readonly alerts: AlertsService,
    private readonly chats: LeadsChatService,
    private readonly erasedContacts: LeadErasureRepository,
    private readonly charts: ChartsService,
    @Inject(MESSAGES) private readonly t: Messages,
    @Inject(SCHEDULED_JOBS) private readonly scheduled: boolean,
  ) {
    this.runner = new PassRunner({
      clock,
      pass: async () => {
        this.report = null;
        this.report = await this.run();
      },
      onFailure: (err) => this.logger.error({ msg: 'housekeeping run failed', error: errorText(err) }),
    });
  }

  onApplicationBootstrap(): void {
    if (this.scheduled) this.leases.every('housekeeping', 60_000, () => this.tick());
  }

  /** One run now, or the running one (no overlap); resolves with its report. */
  async tick(): Promise<HousekeepingReport | null> {
    await this.runner.tick();
    return this.report;
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.leases.end('housekeeping', () => this.runner.stopAndWait());
  }

  async run(): Promise<HousekeepingReport> {
    const report: HousekeepingReport = { reminders: 0, digest: false, anonymised: 0, pruned: 0, ran: false };
    // One instance at a time runs the jobs (each is also safe to run twice: claimed per lead or per day, or idempotent).
    try {
      if (!(await this.leases.take('housekeeping'))) return report;
    } catch (err) {
      // The database away (PostgreSQL restarting): a warning a minute; anything else is a fault.
      const level = isStorageError(err) ? 'warn' : 'error';
      this.logger[level]({ msg: 'housekeeping skipped: lease not taken', error: errorText(err) });
      return report;
    }
    report.ran = true;
    // Each job on its own: one failing does not stop the others.
    const jobs: [string, () => Promise<void>][] = [
      ['reminders', async () => void (report.reminders = await this.remind())],
      ['digest', async () => void (report.digest = await this.digest())],
      ['retention', async () => void (report.anonymised = await this.anonymisation.applyRetention(this.config.housekeeping.retentionDays))],
      ['prune', async () => void (report.pruned = await this.prune())],
    ];
    for (const [name, job] of jobs) {
      try {
        await job();
      } catch (err) {
        this.logger.error({ msg: `housekeeping ${name} failed`, error: errorText(err) });
      }
    }
    return report;
  }

  /** One reminder reply on a card still `new` after LEADS_REMIND_AFTER_MIN, once per lead. */
  async remind(): Promise<number> {
    const { remindAfterMin } = this.config.housekeeping;
    let sent = 0;
    for (const lead of await this.leads.dueReminders(this.clock.now() - remindAfterMin * 60_000, 20)) {
      if (!(await this.leads.claimReminder(lead.id, this.clock.now()))) continue;
      const reminder = { chatId: lead.chat_id!, text: this.t.group.reminder(lead.id, remindAfterMin), html: false };
      let result = await this.telegram.send({ ...reminder, threadId: lead.card_thread_id, replyTo: lead.message_id! });
      let topic = '';
      if (!result.ok && result.kind === 'thread_gone') {
        // The card's topic is closed or deleted: the reminder goes into the chat's General topic on its own.
        this.chats.topicGone(lead.chat_id!, lead.card_thread_id, result.description, this.t.alerts.topicReminder(lead.id));
        topic = ` (in the chat's General topic: the card's topic refused it, ${result.description})`;
        result = await this.telegram.send(reminder);
      }
      if (result.ok) {
        sent += 1;
        await this.leads.recordEvent(lead.id, 'reminded', this.clock.now(), `still new after ${remindAfterMin} min${topic}`);
        await this.leads.noticeSent(lead.id, lead.chat_id!, result.value.message_id);
      } else if (!AGAIN.has(result.kind)) {
        // Refused for good (the bot left the chat, the card is gone): kept, so that it never holds other leads' reminders.
        await this.leads.recordEvent(lead.id, 'reminder_failed', this.clock.now(), `Telegram refused it: ${result.description}`);
        this.logger.warn({ msg: 'reminder refused; not tried again', lead_number: lead.id, error: result.description });
      } else {
        await this.leads.releaseReminder(lead.id);
        this.logger.warn({ msg: 'reminder not sent; next minute tries again', lead_number: lead.id, error: result.description });
        if (result.kind === 'flood') break;
      }
    }
    return sent;
  }

  /** The daily digest to the admin chat at LEADS_DIGEST_AT local time, once per local day even across restarts. */
  async digest(): Promise<boolean> {
    const chat = this.config.telegram.adminChatId;
    if (!chat || !this.telegram.available) return false;
    const now = this.clock.now();
    const { hour, minute } = localWallTime(now, this.config.timezone);
    if (hour * 60 + minute < this.config.housekeeping.digestAtMin) return false;
    const date = localDate(now, this.config.timezone);
    const key = `digest:${date}`;
    if (!(await this.jobRuns.claimRun(key, now))) return false;
    // Its text not read (a database error): given back, the next minute tries again.
    const text = await this.reports.digest().catch(async (err: unknown) => {
      await this.jobRuns.releaseRun(key);
      throw err;
    });
    const result = await this.alerts.sendToAdmin(text);
    if (!result.ok) {
      await this.jobRuns.releaseRun(key);
      this.logger.warn({ msg: 'digest not sent; next minute tries again', error: result.description });
      return false;
    }
    this.logger.log({ msg: 'digest sent', date });
    await this.digestPicture(date);
    return true;
  }

  /** The leads-per-day chart after the digest's text, once: a failure is logged, not tried again. */
  private async digestPicture(date: string): Promise<void> {
    try {
      const picture = await this.charts.digestPicture();
      const sent = await this.alerts.sendPhotoToAdmin({ content: picture.png, filename: `leads-${date}.png`, caption: picture.caption });
      if (sent.ok) this.logger.log({ msg: 'digest picture sent', date });
      else this.logger.warn({ msg: 'digest picture not sent', date, error: sent.description });
    } catch (err) {
      this.logger.warn({ msg: 'digest picture not sent', date, error: errorText(err) });
    }
  }

  /** Limit and lockout records older than any window, and erasures no late replay can precede (LATE_MAX_AGE_MS). */
  async prune(): Promise<number> {
    const widest = Math.max(this.config.leads.ipWindowSec * 1000, HOUR, SECRET_FAILURE_WINDOW_MS);
    const rates = await this.rateEvents.pruneBefore(this.clock.now() - widest);
    return rates + (await this.erasedContacts.pruneErasedBefore(this.clock.now() - LATE_MAX_AGE_MS));
  }
}
