import { Inject, Injectable, Logger } from '@nestjs/common';
import { EventEmitter2 } from '@nestjs/event-emitter';
import {
  canonicalIp,
  LATE_FIELD,
  REPEAT_WINDOW_MS,
  validateLate,
  validateSubmission,
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
import { LEAD_ACCEPTED, LeadAcceptedEvent } from './lead-accepted.event';
import { changedFields, retryAfterSeconds, type SubmitOutcome } from './lead-submission';
import { type Decision, type KnownRequest, LeadSubmitRepository, type SubmitSteps } from '../repositories/lead-submit.repository';
import { SubmitProblemsLog } from './submit-problems.log';
import { VisitorHasher } from './visitor-hasher';

const HOUR_MS = 60 * 60 * 1000;
export const HOURLY_LIMIT_ALERT = 'hourly_limit';

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
    private readonly submits: LeadSubmitRepository,
    private readonly hasher: VisitorHasher,
    private readonly alerts: AlertsService,
    private readonly clock: Clock,
    private readonly writeHealth: WriteHealth,
    private readonly problems: SubmitProblemsLog,
    private readonly events: EventEmitter2,
  ) {}

  async submit(request: SubmitRequest): Promise<SubmitOutcome> {
    const body = { ...request.body };
    if ((body.request_id === undefined || body.request_id === null) && request.idempotencyKey !== undefined) {
      body.request_id = request.idempotencyKey;
    }
    const checked = validateSubmission(body);
    const late = validateLate(body[LATE_FIELD], this.clock.now());
    if (!checked.ok || !late.ok) {
      const errors: FieldErrors<ReportedField | SourceField> = {
        ...(checked.ok ? {} : checked.errors),
        ...(late.ok ? {} : { [LATE_FIELD]: 'invalid' }),
      };
      return { kind: 'invalid', errors };
    }

    const lead = checked.value;
    const visitorIp = lead.client_ip ?? canonicalIp(request.callerIp) ?? request.callerIp;
    const ipHash = this.hasher.visitor(visitorIp);

    const now = this.clock.now();
    let outcome: SubmitOutcome;
    try {
      outcome = await this.submits.run((q) => this.decide(q, lead, late.value, ipHash, now));
      this.writeHealth.recordSuccess('submit');
    } catch (err) {
      // Storage that cannot take the lead is a 503 (the landing falls back), never an acknowledgement or a 500.
      if (!isStorageError(err)) throw err;
      this.writeHealth.recordFailure('submit', err, this.clock.now());
      this.problems.submitRefused((err as { code: string }).code, lead.request_id);
      return { kind: 'unavailable' };
    }
    this.report(outcome, lead.request_id);
    return outcome;
  }

  /**
   * Step 10 (docs/requirements.md §1.1), with the limit checks inside the same BEGIN IMMEDIATE so that races cannot pass them.
   * A late request (issue 12: replayed from the landing's spool) keeps the visitor's time as its creation time, is
   * matched for repeats around that time (a lead within 24 h of it, before or after), and is never refused by the limits (the landing accepted it when it came);
   * it is still counted, at that time, so that a burst of replays after an outage does not lock out the visitors who
   * come after it.
   */
  private *decide(q: SubmitSteps, lead: LeadSubmission, late: LateInfo | null, ipHash: string, now: number): Decision<SubmitOutcome> {
    // Known request_id first: a landing retry is never throttled.
    const known = yield* q.findRequest(lead.request_id);
    if (known) {
      const fallbackNoted = late?.fallback ? yield* this.noteFallback(q, known, late, now) : false;
      return { kind: 'duplicate', leadNumber: known.leadId, repeat: known.repeat, fallbackNoted };
    }

    // Never after the arrival: the landing's clock may be a little ahead (validateLate allows 5 minutes).
    const createdAt = late ? Math.min(late.submitted_at, now) : now;
    if (!late) {
      const { ipLimit, ipWindowSec, hourlyLimit } = this.config.leads;
      const visitorWindow = ipWindowSec * 1000;
      const visitorNth = yield* q.nthAccepted(ipHash, now - visitorWindow, ipLimit);
      if (visitorNth !== null)
        return { kind: 'limited', why: 'visitor', retryAfterSec: retryAfterSeconds(visitorNth + visitorWindow - now) };
      const hourlyNth = yield* q.nthAccepted(null, now - HOUR_MS, hourlyLimit);
      if (hourlyNth !== null) return { kind: 'limited', why: 'hourly', retryAfterSec: retryAfterSeconds(hourlyNth + HOUR_MS - now) };
    }

    yield* q.recordAccepted(ipHash, createdAt);
    // A late request's arrival and fallback message (issue 12), and where it came from (issue 14).
    const requestColumns = { ...(late ? lateColumnsOf(late, now) : {}), ...sourceColumnsOf(lead.source) };
    // Within 24 h of the visitor's time, on either side: a late request may be older than leads stored after it.
    const target = yield* q.findRepeatTarget(
      lead.telegram.toLowerCase(),
      lead.phone,
      createdAt - REPEAT_WINDOW_MS,
      createdAt + REPEAT_WINDOW_MS,
    );
    if (target) {
      const repeatId = yield* q.insertRepeat({
        lead_id: target.id,
        request_id: lead.request_id,
        created_at: createdAt,
        changes: JSON.stringify(changedFields(target, lead)),
        ip_hash: ipHash,
        next_attempt_at: now,
        ...requestColumns,
        // A repeat's fallback message is never its card: the lead has one. It gets its reply at once.
        ...(late?.fallback ? { fallback_state: 'answer' as const } : {}),
      });
      if (late)
        yield* q.recordEvent({
          leadId: target.id,
          repeatId,
          kind: 'received_late',
          at: now,
          detail: lateStory(late, now, `a repeat of #${target.id}`),
        });
      return { kind: 'repeat', leadNumber: target.id, late: late !== null };
    }
    const id = yield* q.insertLead({
      request_id: lead.request_id,
      name: lead.name,
      telegram: lead.telegram,
      telegram_key: lead.telegram.toLowerCase(),
      phone: lead.phone,
      date: lead.date,
      guests: lead.guests,
      comment: lead.comment,
      ip_hash: ipHash,
      created_at: createdAt,
      next_attempt_at: now,
      ...requestColumns,
    });
    if (late)
      yield* q.recordEvent({ leadId: id, repeatId: null, kind: 'received_late', at: now, detail: lateStory(late, now, `lead #${id}`) });
    return { kind: 'created', leadNumber: id, late: late !== null };
  }

  /**
   * A replay of a request the server already has (the landing's 5 s ran out while the server stored it, so the group
   * also got the fallback message, docs/requirements.md §8.3): the answer stays a plain 200, and that message is
   * recorded once, so that the outbox adopts it (no card yet) or answers it with the lead's number.
   */
  private *noteFallback(q: SubmitSteps, known: KnownRequest, late: LateInfo, now: number): Decision<boolean> {
    const f = late.fallback;
    if (!f || known.hasFallback) return false;
    if (!(yield* q.reportFallback(known, { chatId: f.chat_id, messageId: f.message_id, sentAt: f.sent_at, now }))) return false;
    const what = known.repeat ? `a repeat of #${known.leadId}, stored before` : `lead #${known.leadId}, stored before`;
    yield* q.recordEvent({
      leadId: known.leadId,
      repeatId: known.repeat ? known.rowId : null,
      kind: 'received_late',
      at: now,
      detail: `${lateStory(late, now, what)}; the fallback message is recorded`,
    });
    return true;
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
        if (outcome.why === 'hourly') {
          // docs/requirements.md §3.2: 429 (why: hourly) and an admin alert, at most once an hour. Not awaited: the answer does not wait.
          void this.alerts.sendThrottled(
            HOURLY_LIMIT_ALERT,
            HOUR_MS,
            `⚠️ Лимит заявок: больше ${this.config.leads.hourlyLimit} за час. Новые заявки получают 429, пока окно не освободится.`,
          );
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
    fallback_chat_id: f?.chat_id ?? null,
    fallback_message_id: f?.message_id ?? null,
    fallback_sent_at: f?.sent_at ?? null,
    fallback_state: f ? ('pending' as const) : null,
    fallback_next_at: f ? now : null,
  };
}

/** The columns of a request's `source` (issue 14); none when it sent none (the columns stay null). */
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

const isoTime = (ms: number) => new Date(ms).toISOString();

/** The trace's line for a late request: where the landing sent it, when, and when the server got it. No personal data. */
export function lateStory(late: LateInfo, now: number, what: string): string {
  const f = late.fallback;
  const where = f ? `; fallback message: chat ${f.chat_id}, message ${f.message_id}, sent ${isoTime(f.sent_at)}` : '; no fallback message';
  const after = Math.max(0, Math.round((now - late.submitted_at) / 1000));
  return (
    `submitted on the landing ${isoTime(late.submitted_at)}, route ${late.route} (${late.reason})${where}; ` +
    `replayed from the landing's spool and stored ${isoTime(now)} (${after} s later) as ${what}`
  );
}
