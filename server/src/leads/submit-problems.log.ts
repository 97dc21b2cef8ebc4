import { Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { ThrottledLog } from '../observability/throttled-log';

/** `POST /leads` problems that come in floods (aborted uploads, a database that cannot take writes): one line per 10 s each. */
@Injectable()
export class SubmitProblemsLog implements OnApplicationShutdown {
  private readonly logger = new Logger('Leads');
  readonly aborted = new ThrottledLog((f) => this.logger.warn(f), 'uploads aborted by the client before the body was read');
  readonly unavailable = new ThrottledLog((f) => this.logger.error(f), 'submit refused with 503: the database cannot take writes');

  onApplicationShutdown(): void {
    this.aborted.flush();
    this.unavailable.flush();
  }
}
