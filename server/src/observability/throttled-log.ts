/** A log line for floods: the first at once, later ones within `intervalMs` in one line (with their count) when it ends. */
export class ThrottledLog {
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
