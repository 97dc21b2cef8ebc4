// The pass runner on its own: passes held open by hand, a hand-moved clock. No database, no timers.
import { Clock } from '../clock/clock';
import { PassRunner, type PassRunnerOptions } from './pass-runner';

class HandClock extends Clock {
  t = Date.UTC(2026, 10, 29, 9, 0, 0);
  override now(): number {
    return this.t;
  }
}

/**
 * A pass that stays open until the test ends it: `started` counts passes begun, `open` how many run now (and `most`
 * the largest that ever did), `release()` ends the oldest open pass.
 */
class HeldPasses {
  started = 0;
  open = 0;
  most = 0;
  readonly log: string[] = [];
  private readonly waiting: (() => void)[] = [];
  private readonly startWaiters: { count: number; resolve: () => void }[] = [];

  readonly pass = async (): Promise<void> => {
    this.started += 1;
    this.open += 1;
    this.most = Math.max(this.most, this.open);
    const n = this.started;
    this.log.push(`start ${n}`);
    for (const w of this.startWaiters.filter((w) => this.started >= w.count)) w.resolve();
    await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.open -= 1;
    this.log.push(`end ${n}`);
  };

  /** Resolves once `count` passes have begun. */
  begun(count: number): Promise<void> {
    if (this.started >= count) return Promise.resolve();
    return new Promise((resolve) => this.startWaiters.push({ count, resolve }));
  }

  release(): void {
    const next = this.waiting.shift();
    if (!next) throw new Error('no pass is open');
    next();
  }
}

function runner(overrides: Partial<PassRunnerOptions> & Pick<PassRunnerOptions, 'pass'>) {
  const clock = new HandClock();
  const failures: { error: string; failures: number; backoffMs: number }[] = [];
  const successes: number[] = [];
  const r = new PassRunner({
    clock,
    backoffMs: (n) => [5_000, 15_000, 60_000][Math.min(n, 3) - 1],
    onSuccess: (before) => successes.push(before),
    onFailure: (err, n, backoffMs) => failures.push({ error: (err as Error).message, failures: n, backoffMs }),
    ...overrides,
  });
  return { r, clock, failures, successes };
}

/** A runner whose first pass, asked for by `soon`, has begun and is held open. */
async function withOpenPass() {
  const passes = new HeldPasses();
  const built = runner({ pass: passes.pass });
  built.r.soon();
  await passes.begun(1);
  return { passes, r: built.r };
}

describe('PassRunner', () => {
  it('several "run soon" during a pass give exactly one more pass after it', async () => {
    const { passes, r } = await withOpenPass();
    r.soon();
    r.soon();
    r.soon();
    passes.release();
    await passes.begun(2);
    passes.release();
    await r.whenIdle();
    expect(passes.log).toEqual(['start 1', 'end 1', 'start 2', 'end 2']);
    // Nothing asked for during the second pass: none follows it.
    expect(passes.started).toBe(2);
  });

  it('never runs two passes at once: a tick during a pass is that pass, a "soon" waits for its end', async () => {
    const passes = new HeldPasses();
    const { r } = runner({ pass: passes.pass });
    const first = r.tick();
    await passes.begun(1);
    const second = r.tick();
    r.soon();
    expect(second).toBe(first);
    passes.release();
    await passes.begun(2);
    // The pass that follows is running: a tick now is that one, not a third beside it.
    const third = r.tick();
    r.soon();
    passes.release();
    await passes.begun(3);
    passes.release();
    await Promise.all([first, third, r.whenIdle()]);
    expect(passes.most).toBe(1);
    expect(passes.log).toEqual(['start 1', 'end 1', 'start 2', 'end 2', 'start 3', 'end 3']);
  });

  it('a failing pass backs off (no pass until the back-off is over) and the next one succeeds', async () => {
    let calls = 0;
    const { r, clock, failures, successes } = runner({
      pass: () => {
        calls += 1;
        return calls <= 2 ? Promise.reject(new Error(`database is locked ${calls}`)) : Promise.resolve();
      },
    });
    await expect(r.tick()).resolves.toBeUndefined();
    expect(failures).toEqual([{ error: 'database is locked 1', failures: 1, backoffMs: 5_000 }]);
    // Within the back-off nothing runs, however it is asked for.
    r.soon();
    await r.tick();
    clock.t += 4_999;
    await r.tick();
    expect(calls).toBe(1);
    clock.t += 1;
    await r.tick();
    expect(failures[1]).toEqual({ error: 'database is locked 2', failures: 2, backoffMs: 15_000 });
    clock.t += 15_000;
    await r.tick();
    expect(calls).toBe(3);
    expect(successes).toEqual([2]);
    // Back to no back-off: the next failure waits the first delay again, and a success right away runs.
    await r.tick();
    expect(calls).toBe(4);
    expect(successes).toEqual([2, 0]);
  });

  it('stop waits for the running pass; no pass starts after it, not even one asked for during that pass', async () => {
    const { passes, r } = await withOpenPass();
    r.soon();
    const stopped = r.stopAndWait().then(() => passes.log.push('stopped'));
    passes.release();
    await stopped;
    r.soon();
    await r.whenIdle();
    expect(passes.log).toEqual(['start 1', 'end 1', 'stopped']);
  });

  it('when disabled, neither tick nor soon runs anything', async () => {
    let enabled = false;
    let passes = 0;
    const { r } = runner({
      enabled: () => enabled,
      pass: () => Promise.resolve(void (passes += 1)),
    });
    r.soon();
    await r.tick();
    expect(passes).toBe(0);
    enabled = true;
    await r.tick();
    expect(passes).toBe(1);
  });
});
