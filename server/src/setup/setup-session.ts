import type { Clock } from '../clock/clock';
import type { RawUpdate } from '../telegram/telegram.gateway';
import type { TelegramFailure } from '../telegram/telegram-result';
import type { UpdateFeed, Waited } from './update-feed';

/** How setup talks to the operator: lines out, and (at a terminal) answers in. */
export interface SetupIo {
  say(line: string): void;
  /** Someone can answer (a terminal): else every question takes its safe answer and nothing waits for Enter. */
  readonly interactive: boolean;
  /** A question answered with one line; null when nobody can answer: the caller takes the safe way. */
  ask(question: string): Promise<string | null>;
  /** Resolves when the operator presses Enter (to skip a step); never without a terminal. Stops listening at `signal`. */
  enter(signal: AbortSignal): Promise<void>;
}

export interface SetupOptions {
  /** The longest each wait lasts (the bot added, a topic message, the press), in seconds. */
  timeoutSec: number;
  /** Ask for the admin chat as well. */
  admin: boolean;
  /** Delete a webhook that is set, and take (so drop) presses and commands that wait for the server, without asking. */
  deleteWebhook: boolean;
  dropPending: boolean;
  /** Ctrl-C: setup stops waiting, confirms what it read and ends. */
  signal?: AbortSignal;
  /** --chat: only this leads group is taken. --from: only a group this user added the bot to (or wrote in) is taken. */
  chat: string | null;
  from: number | null;
}

/**
 * One run of setup as the operator sees it: its lines (`ok`, `FAIL` — counted —, `note`) and its waits for an update,
 * each bounded by `timeoutSec`, skippable with Enter where said, ended by Ctrl-C (`signal`).
 */
export class SetupSession {
  problems = 0;

  constructor(
    readonly io: SetupIo,
    readonly options: SetupOptions,
    private readonly clock: Clock,
    readonly feed: UpdateFeed,
  ) {}

  ok(text: string): void {
    this.io.say(`ok    ${text}`);
  }

  fail(text: string): void {
    this.problems += 1;
    this.io.say(`FAIL  ${text}`);
  }

  note(text: string): void {
    this.io.say(`note  ${text}`);
  }

  get stopped(): boolean {
    return this.options.signal?.aborted === true;
  }

  pollFailed(failure: TelegramFailure): void {
    if (/409/.test(failure.description) && /webhook/i.test(failure.description)) {
      this.fail(`a webhook was set meanwhile (${failure.description}): run setup again`);
    } else if (/409/.test(failure.description)) {
      this.fail(
        `another program reads this bot's updates (${failure.description}): stop the server (or another setup) while setup runs, or send /stickers_chatid in the group and let the running server answer`,
      );
    } else {
      this.fail(`getUpdates failed (${failure.description})`);
    }
  }

  /** Waits for one update `pick` accepts, within the bound (Enter ends a `skippable` wait); a line for a failure. */
  async wait<T>(pick: (u: RawUpdate) => T | null, skippable: boolean): Promise<Waited<T>> {
    const until = this.clock.now() + this.options.timeoutSec * 1000;
    const local = new AbortController();
    const signals = [local.signal, ...(this.options.signal ? [this.options.signal] : [])];
    if (skippable && this.io.interactive) void this.io.enter(local.signal).then(() => local.abort());
    try {
      const waited = await this.feed.next(pick, until, AbortSignal.any(signals));
      if (waited.kind === 'failed') this.pollFailed(waited.failure);
      return waited;
    } finally {
      local.abort();
    }
  }
}
