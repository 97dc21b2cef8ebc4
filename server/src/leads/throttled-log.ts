/** Fields of one log line (the JSON logger writes them as they are). */
export type LogFields = Record<string, unknown>;

/**
 * A log line for something that can happen thousands of times a minute (aborted uploads, a database that is gone):
 * the first occurrence is logged at once, later ones within `intervalMs` are counted, and the count goes out in one
 * line when the interval ends (or at `flush()`, on shutdown). Every line says how many occurrences it stands for
 * (`count`), so nothing is hidden, only folded.
 */
export class ThrottledLog {
  private windowEnd = Number.NEGATIVE_INFINITY;
  private pending = 0;
  private lastFields: LogFields = {};
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly write: (fields: LogFields) => void,
    private readonly msg: string,
    private readonly now: () => number,
    private readonly intervalMs = 10_000,
  ) {}

  note(fields: LogFields = {}): void {
    const t = this.now();
    this.lastFields = fields;
    if (t < this.windowEnd) {
      this.pending += 1;
      return;
    }
    this.emit(1);
    this.open(t);
  }

  /** Writes the occurrences not yet logged, if any. */
  flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.pending > 0) this.emit(this.pending);
    this.pending = 0;
  }

  private open(t: number): void {
    this.windowEnd = t + this.intervalMs;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (this.pending === 0) return;
      this.emit(this.pending);
      this.pending = 0;
      this.open(this.now());
    }, this.intervalMs);
    this.timer.unref();
  }

  private emit(count: number): void {
    this.write({ msg: this.msg, ...this.lastFields, count, interval_sec: this.intervalMs / 1000 });
  }
}
