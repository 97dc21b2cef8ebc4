import { Inject, Injectable, Logger } from '@nestjs/common';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { LEAD_FIELDS, REPEAT_WINDOW_MS, SOURCE_KEYS, type LateInfo, type LeadSource, type RateLimitReason } from '@stickers/shared';
import { AlertsService } from '../alerts/alerts.service';
import { Clock } from '../clock/clock';
import { SERVER_CONFIG } from '../config/config.module';
import type { ServerConfig } from '../config/config';
import { isStorageError, storageErrorCode, WriteHealth } from '../database/write-health';
import { LEAD_ACCEPTED, type LeadAcceptedEvent } from '../domain/events';
import { retryAfterSeconds } from '../http/api-error';
import type { CheckedSubmission } from './leads.dto';
import { type ReportedFallback, SubmitRunner, type SubmitPlan, type SubmitVerdict } from '../repositories/submit-runner';
import { ContactHasher } from '../anonymisation/contact-hasher';
import { FallbackVerifier } from '../access/fallback-verifier';
import { formFieldsOf } from '../domain/lead';
import { erasedLeadColumns, SOURCE_COLUMN, type SourceColumns } from '../domain/personal-fields';
import { SubmitProblemsLog } from './submit-problems.log';
import { VisitorHasher } from '../access/visitor-hasher';
import { MESSAGES } from '../i18n/i18n.module';
import type { Messages } from '../i18n';
import { MessagesService } from '../conversations/messages.service';

const HOUR_MS = 60 * 60 * 1000;

/** What the submit decision came to, for the controller to answer; `unavailable`: nothing was stored. */
type SubmitOutcome =
  | (Exclude<SubmitVerdict, { kind: 'limited' }> & { telegramLink: string | null })
  | { kind: 'limited'; why: Exclude<RateLimitReason, 'secret' | 'flood'>; retryAfterSec: number }
  | { kind: 'unavailable' };

/** Steps 6–10 of `POST /leads` (docs/requirements.md §1.1): known request_id, limits, and the submit transaction. */
@Injectable()
export class LeadsService {
  private readonly logger = new Logger('Leads');

  constructor(
    @Inject(SERVER_CONFIG) private readonly config: ServerConfig,
    private readonly submits: SubmitRunner,
    private readonly hasher: VisitorHasher,
    private readonly alerts: AlertsService,
    private readonly clock: Clock,
    private readonly writeHealth: WriteHealth,
    private readonly problems: SubmitProblemsLog,
    private readonly events: EventEmitter2,
    private readonly contacts: ContactHasher,
    private readonly fallbacks: FallbackVerifier,
    @Inject(MESSAGES) private readonly t: Messages,
    private readonly conversations: MessagesService,
  ) {}

  /** `callerIp`: the socket's address, canonical (`callerAddress`), the visitor without `client_ip`. */
  async submit(checked: CheckedSubmission, callerIp: string): Promise<SubmitOutcome> {
    const { lead } = checked;
    // A fallback message is adopted or answered only when the landing's signature of the claim checks.
    const screened = this.fallbacks.screen(lead.request_id, checked.late);
    const ipHash = this.hasher.visitor(lead.client_ip ?? callerIp);

    const now = this.clock.now();
    const plan = this.plan({ ...checked, late: screened.late }, ipHash, now, screened.ignored);
    let verdict: SubmitVerdict;
    try {
      verdict = await this.submits.submit(plan);
      this.writeHealth.recordSuccess('submit');
    } catch (err) {
      // Storage that cannot take the lead is a 503 (the landing falls back), never an acknowledgement or a 500.
      if (!isStorageError(err)) throw err;
      this.writeHealth.recordFailure('submit', err, this.clock.now());
      this.problems.unavailable.note({ code: storageErrorCode(err), request_id: lead.request_id });
      return { kind: 'unavailable' };
    }
    this.report(verdict, lead.request_id, checked.late !== null);
    if (checked.late && checked.late.skewMs > 0) this.reportSkew(checked.late.skewMs);
    if (verdict.kind === 'limited') {
      const windowMs = verdict.why === 'visitor' ? this.config.leads.ipWindowSec * 1000 : HOUR_MS;
      return { kind: 'limited', why: verdict.why, retryAfterSec: retryAfterSeconds(verdict.nth + windowMs - now) };
    }
    // After the commit, outside the decision: a link to the lead the answer names (a duplicate's and a repeat's too).
    return { ...verdict, telegramLink: await this.conversations.linkFor(verdict.lead_number) };
  }

  /** What the decision needs, worked out before the lock: every column the decision writes is named here, none there. */
  private plan({ lead, consent, late }: CheckedSubmission, ipHash: string, now: number, ignored: string | null): SubmitPlan {
    // Never after the arrival (validateLate takes a time ahead as the server's now).
    const createdAt = late ? Math.min(late.submitted_at, now) : now;
    const { ipLimit, ipWindowSec, hourlyLimit, lateHourlyLimit } = this.config.leads;
    // The columns a new lead and a repeat both have: the request's own.
    const requestColumns = {
      request_id: lead.request_id,
      created_at: createdAt,
      ip_hash: ipHash,
      received_at: now,
      ...(late ? lateColumnsOf(late) : {}),
      ...sourceColumnsOf(lead.source),
      ...(lead.captcha ? { captcha: lead.captcha } : {}),
      ...(consent ? { consent_accepted_at: consent.accepted_at, consent_policy_url: consent.policy_url } : {}),
    };
    // A lead may have one contact (LEADS_REQUIRED_CONTACTS): the missing one is null, which matches nothing.
    const telegramKey = lead.telegram?.toLowerCase() ?? null;
    const formFields = formFieldsOf(lead);
    const plan: SubmitPlan = {
      request_id: lead.request_id,
      now,
      created_at: createdAt,
      ip_hash: ipHash,
      count: late ? 'late' : 'accepted',
      limits: {
        visitor_since: now - ipWindowSec * 1000,
        visitor_limit: ipLimit,
        hourly_since: now - HOUR_MS,
        hourly_limit: late ? lateHourlyLimit : hourlyLimit,
      },
      // Within 24 h of the visitor's time, on either side: a late request may be older than leads stored after it.
      // By the contacts the request has: a null one matches no lead (`=` never takes two nulls for the same person).
      match: {
        telegram_key: telegramKey,
        phone: lead.phone,
        since: createdAt - REPEAT_WINDOW_MS,
        until: createdAt + REPEAT_WINDOW_MS,
      },
      incoming: formFields,
      fields: LEAD_FIELDS,
      lead: { ...formFields, telegram_key: telegramKey, ...requestColumns },
      repeat: {
        ...requestColumns,
        // A repeat's fallback message is never its card: the lead has one. It gets its reply at once.
        ...(late?.fallback ? { fallback_state: 'answer' as const } : {}),
      },
      fallback: late?.fallback ? fallbackColumnsOf(late.fallback) : null,
      late_story: late ? `${lateStoryPrefix(late, now)}${ignored ? `; ${ignored}` : ''}` : null,
      erased: null,
    };
    if (late) {
      // Looked up inside the decision: an erasure commits under the same lock, so it is seen or comes after.
      const hashes = [
        ...(lead.telegram !== null ? [this.contacts.telegram(lead.telegram)] : []),
        ...(lead.phone !== null ? [this.contacts.phone(lead.phone)] : []),
      ];
      plan.erased = { hashes, lead: { ...plan.lead, ...erasedLeadColumns(), anonymised_at: now } };
    }
    return plan;
  }

  /** A landing whose clock runs ahead: its replays are taken at the server's time; ops hear of it once a day. */
  private reportSkew(skewMs: number): void {
    this.logger.warn({ msg: "a landing's clock is ahead of the server's", skew_sec: Math.round(skewMs / 1000) });
    void this.alerts.sendThrottled('landing_clock_ahead', 24 * HOUR_MS, this.t.alerts.landingClock(Math.round(skewMs / 1000)));
  }

  /** `late`: replayed from the landing's spool. `lead.accepted` after the commit: the outbox publishes now, not at its next interval. */
  private report(verdict: SubmitVerdict, requestId: string, late: boolean): void {
    const { leads } = this.config;
    const accepted = (event: LeadAcceptedEvent) => this.events.emit(LEAD_ACCEPTED, event);
    switch (verdict.kind) {
      case 'created':
      case 'repeat':
        this.logger.log({
          msg: verdict.kind === 'created' ? 'lead created' : 'repeat recorded',
          request_id: requestId,
          lead_number: verdict.lead_number,
          ...(late ? { late: true } : {}),
        });
        accepted({ leadNumber: verdict.lead_number, requestId, repeat: verdict.kind === 'repeat' });
        break;
      case 'duplicate':
        this.logger.log({ msg: 'duplicate request', request_id: requestId, lead_number: verdict.lead_number });
        // A fallback message to adopt or answer: the outbox has work now.
        if (verdict.fallback_noted) accepted({ leadNumber: verdict.lead_number, requestId, repeat: verdict.repeat });
        break;
      case 'limited':
        this.logger.warn({ msg: 'rate limited', request_id: requestId, why: verdict.why });
        // §3.2: an admin alert at most once an hour, not awaited; replays over their own allowance apart.
        if (verdict.why !== 'hourly') break;
        if (late) void this.alerts.sendThrottled('late_hourly_limit', HOUR_MS, this.t.alerts.lateHourlyLimit(leads.lateHourlyLimit));
        else void this.alerts.sendThrottled('hourly_limit', HOUR_MS, this.t.alerts.hourlyLimit(leads.hourlyLimit));
        break;
    }
  }
}

function lateColumnsOf(late: LateInfo) {
  const f = late.fallback;
  return {
    late_route: late.route,
    late_reason: late.reason,
    ...(f ? { ...fallbackColumnsOf(f), fallback_state: 'pending' as const } : {}),
  };
}

function fallbackColumnsOf(f: NonNullable<LateInfo['fallback']>): ReportedFallback {
  return { fallback_chat_id: f.chat_id, fallback_message_id: f.message_id, fallback_sent_at: f.sent_at };
}

/** The columns of a request's `source`; none without one (the columns stay null). */
function sourceColumnsOf(source: LeadSource | undefined): Partial<SourceColumns> {
  return source ? Object.fromEntries(SOURCE_KEYS.map((k) => [SOURCE_COLUMN[k], source[k] ?? null])) : {};
}

const isoTime = (ms: number) => new Date(ms).toISOString();

/** The trace's line for a late request, up to what it was stored as. No personal data. */
function lateStoryPrefix(late: LateInfo, now: number): string {
  const f = late.fallback;
  const where = f ? `; fallback message: chat ${f.chat_id}, message ${f.message_id}, sent ${isoTime(f.sent_at)}` : '; no fallback message';
  const after = Math.max(0, Math.round((now - late.submitted_at) / 1000));
  const skew =
    late.skewMs > 0 ? ` (the landing's clock was ${Math.round(late.skewMs / 1000)} s ahead: its time is taken as the server's)` : '';
  return (
    `submitted on the landing ${isoTime(late.submitted_at)}${skew}, route ${late.route} (${late.reason})${where}; ` +
    `replayed from the landing's spool and stored ${isoTime(now)} (${after} s later)`
  );
}
