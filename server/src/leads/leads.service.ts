import { Inject, Injectable, Logger } from '@nestjs/common';
import { EventEmitter2 } from '@nestjs/event-emitter';
import {
  canonicalIp,
  checkConsent,
  CONSENT_FIELD,
  LATE_FIELD,
  LEAD_FIELDS,
  REPEAT_WINDOW_MS,
  validateLate,
  validateSubmission,
  type ConsentInfo,
  type FieldErrors,
  type LateInfo,
  type LeadSource,
  type LeadSubmission,
  type ReportedField,
  type SourceField,
} from '@stickers/shared';
import { AlertsService } from '../alerts/alerts.service';
import { Clock } from '../clock/clock';
import { SERVER_CONFIG } from '../config/config.module';
import type { ServerConfig } from '../config/config';
import { isStorageError, WriteHealth } from '../database/write-health';
import { LEAD_ACCEPTED, LeadAcceptedEvent } from '../domain/lead-accepted.event';
import { retryAfterSeconds } from '../http/retry-after';
import type { SubmitOutcome } from './lead-submission';
import { type ReportedFallback, SubmitRunner, type SubmitPlan, type SubmitVerdict } from '../repositories/submit-runner';
import { ContactHasher } from '../anonymisation/contact-hasher';
import { FallbackVerifier } from '../access/fallback-verifier';
import { formFieldsOf } from '../domain/lead';
import { erasedLeadColumns } from '../domain/personal-fields';
import { SubmitProblemsLog } from './submit-problems.log';
import { VisitorHasher } from '../access/visitor-hasher';
import { MESSAGES } from '../i18n/i18n.module';
import type { Messages } from '../i18n';
import { TelegramLinksService } from '../conversations/telegram-links.service';

const HOUR_MS = 60 * 60 * 1000;
export const HOURLY_LIMIT_ALERT = 'hourly_limit';
export const LATE_HOURLY_LIMIT_ALERT = 'late_hourly_limit';
export const LANDING_CLOCK_ALERT = 'landing_clock_ahead';
const DAY_MS = 24 * HOUR_MS;

export interface SubmitRequest {
  body: Record<string, unknown>;
  /** The socket address of the caller; the visitor when the body has no `client_ip`. */
  callerIp: string;
  /** The `Idempotency-Key` header, used as `request_id` when the body has none. */
  idempotencyKey?: string;
}

/** Steps 5–10 of `POST /leads` (docs/requirements.md §1.1): fields, known request_id, limits, and the submit transaction. */
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
    private readonly telegramLinks: TelegramLinksService,
  ) {}

  async submit(request: SubmitRequest): Promise<SubmitOutcome> {
    const body = { ...request.body };
    if ((body.request_id === undefined || body.request_id === null) && request.idempotencyKey !== undefined) {
      body.request_id = request.idempotencyKey;
    }
    const { phoneRegion, requiredContacts, requireConsent } = this.config.leads;
    const checked = validateSubmission(body, { phoneRegion, requiredContacts });
    const late = validateLate(body[LATE_FIELD], this.clock.now());
    // A replay's consent was stamped by the landing's clock when the visitor sent it: it may be as far ahead as `late`.
    const isLate = body[LATE_FIELD] !== undefined && body[LATE_FIELD] !== null;
    const consent = checkConsent(body[CONSENT_FIELD], this.clock.now(), { required: requireConsent, late: isLate });
    if (!checked.ok || !late.ok || !consent.ok) {
      const errors: FieldErrors<ReportedField | SourceField> = {
        ...(checked.ok ? {} : checked.errors),
        ...(late.ok ? {} : { [LATE_FIELD]: 'invalid' }),
        ...(consent.ok ? {} : { [CONSENT_FIELD]: consent.code }),
      };
      return { kind: 'invalid', errors };
    }

    const lead = checked.value;
    // A fallback message is adopted or answered only when the landing's signature of the claim checks.
    const screened = this.fallbacks.screen(lead.request_id, late.value);
    const visitorIp = lead.client_ip ?? canonicalIp(request.callerIp) ?? request.callerIp;
    const ipHash = this.hasher.visitor(visitorIp);

    const now = this.clock.now();
    const plan = this.plan(lead, consent.value, screened.late, ipHash, now, screened.ignored);
    let outcome: SubmitOutcome;
    try {
      outcome = this.outcomeOf(await this.submits.submit(plan), late.value !== null, now);
      this.writeHealth.recordSuccess('submit');
    } catch (err) {
      // Storage that cannot take the lead is a 503 (the landing falls back), never an acknowledgement or a 500.
      if (!isStorageError(err)) throw err;
      this.writeHealth.recordFailure('submit', err, this.clock.now());
      this.problems.submitRefused((err as { code?: string }).code ?? 'CONNECTION_LOST', lead.request_id);
      return { kind: 'unavailable' };
    }
    this.report(outcome, lead.request_id);
    if (late.value && late.value.skewMs > 0) this.reportSkew(late.value.skewMs);
    // After the commit, outside the decision: a link to the lead the answer names (a duplicate's and a repeat's too).
    if (outcome.kind === 'created' || outcome.kind === 'repeat' || outcome.kind === 'duplicate') {
      return { ...outcome, telegramLink: await this.telegramLinks.linkFor(outcome.leadNumber) };
    }
    return outcome;
  }

  /**
   * What the decision needs, worked out before the lock: the windows of the limits, the repeat match around the
   * visitor's time, and the rows to write whole (docs/requirements.md §1.1, step 10; leads/submit-decision.ts): every
   * column the decision writes is named here, none in the decision.
   */
  private plan(
    lead: LeadSubmission,
    consent: ConsentInfo | null,
    late: LateInfo | null,
    ipHash: string,
    now: number,
    ignored: string | null,
  ): SubmitPlan {
    // Never after the arrival (validateLate takes a time ahead as the server's now).
    const createdAt = late ? Math.min(late.submitted_at, now) : now;
    const { ipLimit, ipWindowSec, hourlyLimit, lateHourlyLimit } = this.config.leads;
    // A late request's arrival and fallback message, where it came from, what came of the landing's captcha, and the
    // consent it carries.
    const requestColumns = {
      received_at: now,
      ...(late ? lateColumnsOf(late, now) : {}),
      ...sourceColumnsOf(lead.source),
      ...(lead.captcha ? { captcha: lead.captcha } : {}),
      ...consentColumnsOf(consent),
    };
    // A lead may have one contact (LEADS_REQUIRED_CONTACTS): the missing one is null, which matches nothing.
    const telegramKey = lead.telegram?.toLowerCase() ?? null;
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
      incoming: formFieldsOf(lead),
      fields: LEAD_FIELDS,
      lead: {
        request_id: lead.request_id,
        ...formFieldsOf(lead),
        telegram_key: telegramKey,
        ip_hash: ipHash,
        created_at: createdAt,
        ...requestColumns,
      },
      repeat: {
        request_id: lead.request_id,
        created_at: createdAt,
        ip_hash: ipHash,
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

  /** The decision's verdict as the route's outcome: a limit's verdict becomes its Retry-After. */
  private outcomeOf(verdict: SubmitVerdict, late: boolean, now: number): SubmitOutcome {
    switch (verdict.kind) {
      case 'duplicate':
        return { kind: 'duplicate', leadNumber: verdict.lead_number, repeat: verdict.repeat, fallbackNoted: verdict.fallback_noted };
      case 'limited': {
        const windowMs = verdict.why === 'visitor' ? this.config.leads.ipWindowSec * 1000 : HOUR_MS;
        return { kind: 'limited', why: verdict.why, retryAfterSec: retryAfterSeconds(verdict.nth + windowMs - now), late };
      }
      default:
        return { kind: verdict.kind, leadNumber: verdict.lead_number, late };
    }
  }

  /** A landing whose clock runs ahead: its replays are taken at the server's time; ops hear of it once a day. */
  private reportSkew(skewMs: number): void {
    this.logger.warn({ msg: "a landing's clock is ahead of the server's", skew_sec: Math.round(skewMs / 1000) });
    void this.alerts.sendThrottled(LANDING_CLOCK_ALERT, DAY_MS, this.t.alerts.landingClock(Math.round(skewMs / 1000)));
  }

  private report(outcome: SubmitOutcome, requestId: string): void {
    switch (outcome.kind) {
      case 'created':
      case 'repeat':
        this.logger.log({
          msg: outcome.kind === 'created' ? 'lead created' : 'repeat recorded',
          request_id: requestId,
          lead_number: outcome.leadNumber,
          ...(outcome.late ? { late: true } : {}),
        });
        // After the commit: the outbox publishes at once instead of at its next interval.
        this.events.emit(LEAD_ACCEPTED, new LeadAcceptedEvent(outcome.leadNumber, requestId, outcome.kind === 'repeat'));
        break;
      case 'duplicate':
        this.logger.log({ msg: 'duplicate request', request_id: requestId, lead_number: outcome.leadNumber });
        // A fallback message to adopt or answer: the outbox has work now.
        if (outcome.fallbackNoted) this.events.emit(LEAD_ACCEPTED, new LeadAcceptedEvent(outcome.leadNumber, requestId, outcome.repeat));
        break;
      case 'limited':
        this.logger.warn({ msg: 'rate limited', request_id: requestId, why: outcome.why });
        if (outcome.why === 'hourly' && outcome.late) {
          // Replays from a landing's spool over their own hourly allowance: the landing waits for Retry-After and goes on.
          void this.alerts.sendThrottled(
            LATE_HOURLY_LIMIT_ALERT,
            HOUR_MS,
            this.t.alerts.lateHourlyLimit(this.config.leads.lateHourlyLimit),
          );
        } else if (outcome.why === 'hourly') {
          // docs/requirements.md §3.2: 429 (why: hourly) and an admin alert, at most once an hour. Not awaited: the answer does not wait.
          void this.alerts.sendThrottled(HOURLY_LIMIT_ALERT, HOUR_MS, this.t.alerts.hourlyLimit(this.config.leads.hourlyLimit));
        }
        break;
      default:
        break;
    }
  }
}

/** The columns of a late lead or repeat: its arrival, the landing's route and reason, and its fallback message. */
function lateColumnsOf(late: LateInfo, now: number) {
  const f = late.fallback;
  return {
    received_at: now,
    late_route: late.route,
    late_reason: late.reason,
    ...(f ? { ...fallbackColumnsOf(f), fallback_state: 'pending' as const } : {}),
  };
}

/** The columns of a fallback message a replay reports (the decision sets a stored row's state; its reply is an outbox row). */
function fallbackColumnsOf(f: NonNullable<LateInfo['fallback']>): ReportedFallback {
  return { fallback_chat_id: f.chat_id, fallback_message_id: f.message_id, fallback_sent_at: f.sent_at };
}

/** The columns of a request's `source`; none when it sent none (the columns stay null). */
export function sourceColumnsOf(source: LeadSource | undefined) {
  if (!source) return {};
  return {
    source_landing: source.landing ?? null,
    utm_source: source.utm_source ?? null,
    utm_medium: source.utm_medium ?? null,
    utm_campaign: source.utm_campaign ?? null,
    utm_content: source.utm_content ?? null,
    utm_term: source.utm_term ?? null,
    source_referrer: source.referrer ?? null,
  };
}

/**
 * The columns of a request's consent; none without it (the columns stay null). A repeat stores its own; the lead keeps
 * the consent it was first stored with.
 */
export function consentColumnsOf(consent: ConsentInfo | null) {
  if (!consent) return {};
  return { consent_accepted_at: consent.accepted_at, consent_policy_url: consent.policy_url };
}

const isoTime = (ms: number) => new Date(ms).toISOString();

/** The trace's line for a late request, up to what it was stored as: where the landing sent it, when, and when the server got it. No personal data. */
export function lateStoryPrefix(late: LateInfo, now: number): string {
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
