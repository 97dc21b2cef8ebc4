import { Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { Clock } from '../clock/clock';
import { ThrottledLog } from './throttled-log';

/**
 * The log lines of `POST /leads` problems that can come in floods: uploads the client aborted (3000 of them once
 * wrote 3000 error lines) and submits refused because the database cannot take them. One line per 10 s at most
 * for each, with the count of occurrences it stands for; the rest is written at shutdown.
 */
@Injectable()
export class SubmitProblemsLog implements OnApplicationShutdown {
  private readonly logger = new Logger('Leads');
  private readonly aborted: ThrottledLog;
  private readonly unavailable: ThrottledLog;

  constructor(clock: Clock) {
    const now = () => clock.now();
    this.aborted = new ThrottledLog((f) => this.logger.warn(f), 'uploads aborted by the client before the body was read', now);
    this.unavailable = new ThrottledLog((f) => this.logger.error(f), 'submit refused with 503: the database cannot take writes', now);
  }

  uploadAborted(): void {
    this.aborted.note();
  }

  submitRefused(code: string, requestId: string): void {
    this.unavailable.note({ code, request_id: requestId });
  }

  onApplicationShutdown(): void {
    this.aborted.flush();
    this.unavailable.flush();
  }
}
