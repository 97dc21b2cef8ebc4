import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import type { Interface } from 'node:readline';
import type { Clock } from '../clock/clock';
import type { Messages } from '../i18n';
import type { RawUpdate, TelegramGateway } from '../telegram/telegram.gateway';
import type { TelegramFailure } from '../telegram/telegram-result';
import { CheckLines } from './bot-rights';

/**
 * The options of `setup` as commander reads them (cli/program.ts); `signal`: Ctrl-C, setup stops waiting, confirms what
 * it read and ends; `texts`: what it posts in the chats, in LEADS_LOCALE's language.
 */
export interface SetupOptions {
  texts: Messages['setup'];
  timeout: number;
  admin: boolean;
  deleteWebhook?: boolean;
  dropPending?: boolean;
  signal?: AbortSignal;
  chat?: string;
  from?: number;
}

/** The options as commander reads them from the command line. */
export type SetupFlags = Omit<SetupOptions, 'texts' | 'signal'>;

const SETUP_UPDATES = ['message', 'my_chat_member', 'callback_query'] as const;

/** Longest single long poll (Telegram allows 50 s). */
const POLL_SEC = 25;

/** How a wait ended: `value` only when found; `failed`: Telegram refused or failed the poll (409, a webhook, the network). */
type Waited<T> =
  | { kind: 'found'; value: T }
  | { kind: 'timeout' | 'aborted'; value?: undefined }
  | { kind: 'failed'; failure: TelegramFailure; value?: undefined };

/** An update the server would act on (a card's button, a command but /stickers_chatid): not taken from it unnoticed. */
export function isForTheServer(update: RawUpdate, ownData?: (data: string) => boolean): boolean {
  const query = update.callback_query as { data?: string } | undefined;
  if (query) return !(ownData?.(query.data ?? '') ?? false);
  const message = update.message as { text?: string } | undefined;
  const command = /^\/([A-Za-z0-9_]+)/.exec(message?.text ?? '')?.[1];
  return command !== undefined && command !== 'stickers_chatid' && command !== 'start';
}

/**
 * One run of setup: its lines and its waits for an update, by its own long polling: each update looked at once, in
 * order, confirmed at the end for the server. An offset confirms every update before it, so `pending` uses none.
 */
export class SetupSession extends CheckLines {
  /** The test card's `callback_data`, this run's own. */
  protected readonly pressData = `setup:${randomBytes(6).toString('hex')}`;
  /** One past the last update looked at. */
  private offset: number | undefined;
  private readonly buffer: RawUpdate[] = [];
  /** Updates for the server (presses, commands) setup looked at while it waited: they are gone for the server. */
  protected readonly takenFromServer: RawUpdate[] = [];

  constructor(
    readonly telegram: TelegramGateway,
    say: (line: string) => void,
    /** The operator's terminal; null: nobody can answer, every question takes its safe answer and nothing waits for Enter. */
    private readonly terminal: Interface | null,
    private readonly clock: Clock,
    readonly options: SetupOptions,
  ) {
    super(say);
  }

  get interactive(): boolean {
    return this.terminal !== null;
  }

  private line(signal?: AbortSignal): Promise<string> {
    return this.terminal ? once(this.terminal, 'line', { signal }).then(([text]) => String(text), never) : never();
  }

  async yes(question: string): Promise<boolean> {
    if (!this.terminal) return false;
    this.say(question);
    return /^y(es)?$/i.test((await this.line()).trim());
  }

  get stopped(): boolean {
    return this.options.signal?.aborted === true;
  }

  protected pollFailed({ description }: TelegramFailure): void {
    if (!/409/.test(description)) this.fail(`getUpdates failed (${description})`);
    else if (/webhook/i.test(description)) this.fail(`a webhook was set meanwhile (${description}): run setup again`);
    else
      this.fail(
        `another program reads this bot's updates (${description}): stop the server (or another setup) while setup runs, or send /stickers_chatid in the group and let the running server answer`,
      );
  }

  /** Waits for one update `pick` accepts, within the bound (Enter ends a `skippable` wait). */
  async wait<T>(pick: (u: RawUpdate) => T | null, skippable: boolean): Promise<Waited<T>> {
    const until = this.clock.now() + this.options.timeout * 1000;
    const local = new AbortController();
    const signals = [local.signal, ...(this.options.signal ? [this.options.signal] : [])];
    if (skippable) void this.line(local.signal).then(() => local.abort());
    try {
      const waited = await this.next(pick, until, AbortSignal.any(signals));
      if (waited.kind === 'failed') this.pollFailed(waited.failure);
      return waited;
    } finally {
      local.abort();
    }
  }

  /** What waits for the bot now, unconfirmed (kept for the waits that follow); null after a failure's line. */
  protected async pending(): Promise<RawUpdate[] | null> {
    const result = await this.telegram.getUpdates({ timeoutSec: 0, allowedUpdates: SETUP_UPDATES });
    if (!result.ok) {
      this.pollFailed(result);
      return null;
    }
    this.buffer.push(...result.value);
    return result.value;
  }

  /** Drops what `pending` read: the next poll's offset confirms it. */
  protected skipBuffered(): void {
    const last = this.buffer.at(-1);
    if (last) this.offset = last.update_id + 1;
    this.buffer.length = 0;
  }

  /** Looks at updates, oldest first (each one consumed), until `pick` takes one, `until` passes or `signal` aborts. */
  private async next<T>(pick: (update: RawUpdate) => T | null, until: number, signal: AbortSignal): Promise<Waited<T>> {
    for (;;) {
      for (let update = this.buffer.shift(); update; update = this.buffer.shift()) {
        this.offset = update.update_id + 1;
        const value = pick(update);
        if (value !== null) return { kind: 'found', value };
        if (isForTheServer(update, (data) => data === this.pressData)) this.takenFromServer.push(update);
      }
      if (signal.aborted) return { kind: 'aborted' };
      const left = until - this.clock.now();
      if (left <= 0) return { kind: 'timeout' };
      const timeoutSec = Math.min(POLL_SEC, Math.ceil(left / 1000));
      const result = await this.telegram.getUpdates({ offset: this.offset, timeoutSec, allowedUpdates: SETUP_UPDATES }, signal);
      if (signal.aborted) return { kind: 'aborted' };
      if (!result.ok) return { kind: 'failed', failure: result };
      // An offset beyond every update also drops what came before it: keep only the ones not yet looked at.
      this.buffer.push(...result.value.filter((u) => this.offset === undefined || u.update_id >= this.offset));
    }
  }

  /** Confirms the updates looked at with a getUpdates that does not wait: the server's first poll neither gets them nor meets ours (409). */
  protected async confirm(): Promise<TelegramFailure | null> {
    if (this.offset === undefined) return null;
    const result = await this.telegram.getUpdates({ offset: this.offset, timeoutSec: 0, limit: 1, allowedUpdates: SETUP_UPDATES });
    return result.ok ? null : result;
  }
}

const never = () => new Promise<never>(() => undefined);
