import type { Clock } from '../clock/clock';

/** `enabled` is asked at each call; `backoffMs` is the wait after the `failures`-th failed pass in a row. */
export interface PassRunnerOptions {
  clock: Clock;
  pass: () => Promise<void>;
  enabled?: () => boolean;
  backoffMs?: (failures: number) => number;
  onSuccess?: (failuresBefore: number) => void;
  onFailure: (err: unknown, failures: number, backoffMs: number) => void;
}

/** Passes that never overlap: any number of `soon` during a pass give one more after it; a failed pass backs off. */
export class PassRunner {
  private running: Promise<void> | null = null;
  private rerun = false;
  private isStopped = false;
  private failures = 0;
  private backoffUntil = 0;

  constructor(private readonly options: PassRunnerOptions) {}

  get busy(): boolean {
    return this.running !== null;
  }

  /** One pass now, or the running one (no overlap). Resolves when the passes end; never rejects. */
  tick(): Promise<void> {
    if (this.options.enabled?.() === false) return Promise.resolve();
    if (this.running) return this.running;
    this.running = this.loop().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  /** A pass now rather than at the next interval; during a pass, one more follows it (however often this is called). */
  soon(): void {
    if (this.isStopped || this.options.enabled?.() === false) return;
    if (this.running) this.rerun = true;
    else void this.tick();
  }

  async whenIdle(): Promise<void> {
    while (this.running) await this.running;
  }

  /** No pass starts by itself any more (`soon`, the one more asked for); the running one goes on to its end. */
  stop(): void {
    this.isStopped = true;
  }

  async stopAndWait(): Promise<void> {
    this.stop();
    await this.whenIdle();
  }

  private async loop(): Promise<void> {
    const { clock } = this.options;
    do {
      this.rerun = false;
      // After a failed pass the runner waits instead of hammering the database each tick.
      if (clock.now() < this.backoffUntil) return;
      try {
        await this.options.pass();
        const failuresBefore = this.failures;
        this.failures = 0;
        this.backoffUntil = 0;
        this.options.onSuccess?.(failuresBefore);
      } catch (err) {
        this.failures += 1;
        const backoff = this.options.backoffMs?.(this.failures) ?? 0;
        this.backoffUntil = clock.now() + backoff;
        this.options.onFailure(err, this.failures, backoff);
      }
    } while (this.rerun && !this.isStopped);
  }
}
