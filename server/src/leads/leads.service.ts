import { Inject, Injectable, Logger } from '@nestjs/common';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { canonicalIp, REPEAT_WINDOW_MS, validateSubmission, type LeadSubmission } from '@stickers/shared';
import { AlertsService } from '../alerts/alerts.service';
import { Clock } from '../clock/clock';
import { SERVER_CONFIG } from '../config/config.module';
import type { ServerConfig } from '../config/config';
import { isStorageError, WriteHealth } from '../database/write-health';
import { LEAD_ACCEPTED, LeadAcceptedEvent } from './lead-accepted.event';
import { changedFields, retryAfterSeconds, type SubmitOutcome } from './lead-submission';
import { LeadSubmitRepository, type SubmitQueries } from '../repositories/lead-submit.repository';
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
    if (!checked.ok) return { kind: 'invalid', errors: checked.errors };

    const lead = checked.value;
    const visitorIp = lead.client_ip ?? canonicalIp(request.callerIp) ?? request.callerIp;
    const ipHash = this.hasher.visitor(visitorIp);

    const now = this.clock.now();
    let outcome: SubmitOutcome;
    try {
      outcome = await this.submits.run((q) => this.decide(q, lead, ipHash, now));
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

  /** Step 10 (docs/requirements.md §1.1), with the limit checks inside the same BEGIN IMMEDIATE so that races cannot pass them. */
  private decide(q: SubmitQueries, lead: LeadSubmission, ipHash: string, now: number): SubmitOutcome {
    // Known request_id first: a landing retry is never throttled.
    const known = q.findRequest(lead.request_id);
    if (known) return { kind: 'duplicate', leadNumber: known.leadId, repeat: known.repeat };

    const { ipLimit, ipWindowSec, hourlyLimit } = this.config.leads;
    const visitorWindow = ipWindowSec * 1000;
    const visitorNth = q.nthAccepted(ipHash, now - visitorWindow, ipLimit);
    if (visitorNth !== null) return { kind: 'limited', why: 'visitor', retryAfterSec: retryAfterSeconds(visitorNth + visitorWindow - now) };
    const hourlyNth = q.nthAccepted(null, now - HOUR_MS, hourlyLimit);
    if (hourlyNth !== null) return { kind: 'limited', why: 'hourly', retryAfterSec: retryAfterSeconds(hourlyNth + HOUR_MS - now) };

    q.recordAccepted(ipHash, now);
    const target = q.findRepeatTarget(lead.telegram.toLowerCase(), lead.phone, now - REPEAT_WINDOW_MS);
    if (target) {
      q.insertRepeat({
        lead_id: target.id,
        request_id: lead.request_id,
        created_at: now,
        changes: JSON.stringify(changedFields(target, lead)),
        ip_hash: ipHash,
        next_attempt_at: now,
      });
      return { kind: 'repeat', leadNumber: target.id };
    }
    const id = q.insertLead({
      request_id: lead.request_id,
      name: lead.name,
      telegram: lead.telegram,
      telegram_key: lead.telegram.toLowerCase(),
      phone: lead.phone,
      date: lead.date,
      guests: lead.guests,
      comment: lead.comment,
      ip_hash: ipHash,
      created_at: now,
      next_attempt_at: now,
    });
    return { kind: 'created', leadNumber: id };
  }

  private report(outcome: SubmitOutcome, requestId: string): void {
    switch (outcome.kind) {
      case 'created':
      case 'repeat':
        this.logger.log({
          msg: outcome.kind === 'created' ? 'lead created' : 'repeat recorded',
          request_id: requestId,
          lead_number: outcome.leadNumber,
        });
        // After the commit: the outbox publishes at once instead of at its next interval.
        this.events.emit(LEAD_ACCEPTED, new LeadAcceptedEvent(outcome.leadNumber, requestId, outcome.kind === 'repeat'));
        break;
      case 'duplicate':
        this.logger.log({ msg: 'duplicate request', request_id: requestId, lead_number: outcome.leadNumber });
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
