import { Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';

/** A log line for floods: the first at once, later ones within `intervalMs` in one line (with their count) when it ends. */
class ThrottledLog {
  private pending = 0;
  private lastFields: Record<string, unknown> = {};
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly write: (fields: Record<string, unknown>) => void,
    private readonly msg: string,
    private readonly intervalMs = 10_000,
  ) {}

  note(fields: Record<string, unknown> = {}): void {
    this.lastFields = fields;
    if (this.timer) {
      this.pending += 1;
      return;
    }
    this.emit(1);
    // Each interval with notes in it writes their line; the first without any ends the throttle.
    this.timer = setInterval(() => (this.pending > 0 ? this.emit(this.pending) : this.flush()), this.intervalMs).unref();
  }

  flush(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    if (this.pending > 0) this.emit(this.pending);
  }

  private emit(count: number): void {
    this.pending = 0;
    this.write({ msg: this.msg, ...this.lastFields, count, interval_sec: this.intervalMs / 1000 });
  }
}

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
