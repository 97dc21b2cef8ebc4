/** Turns: at most `size` holders at once, the others wait in the order they asked (the CSV exports, the searches). */
export class Turns {
  private held = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly size: number) {}

  /** Waits for a turn; the returned function gives it back (once; a second call does nothing). */
  async take(): Promise<() => void> {
    if (this.held < this.size) this.held += 1;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    let given = false;
    return () => {
      if (given) return;
      given = true;
      // The turn passes straight to the next in line (the count stays), or is freed.
      const next = this.waiting.shift();
      if (next) next();
      else this.held -= 1;
    };
  }

  /** How many hold a turn and how many wait (for the metrics and the tests). */
  get state(): { held: number; waiting: number } {
    return { held: this.held, waiting: this.waiting.length };
  }
}
