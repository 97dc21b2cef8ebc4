import type { Clock } from '../clock/clock';
import type { RawUpdate, TelegramGateway } from '../telegram/telegram.gateway';
import type { TelegramFailure } from '../telegram/telegram-result';

/** The update kinds setup reads: the bot added to a chat, messages (which chat, which topic), the test card's press. */
export const SETUP_UPDATES = ['message', 'my_chat_member', 'callback_query'] as const;

/** Longest single long poll (Telegram allows 50 s); a wait longer than this is several polls. */
const POLL_SEC = 25;

export type Waited<T> =
  | { kind: 'found'; value: T }
  | { kind: 'timeout' }
  | { kind: 'aborted' }
  /** Telegram refused or failed the poll (409: another program polls this bot; a webhook is set; the network). */
  | { kind: 'failed'; failure: TelegramFailure };

/** An update the server would act on (a card's button, a command but /stickers_chatid): not taken from it unnoticed. */
export function isForTheServer(update: RawUpdate, ownData?: (data: string) => boolean): boolean {
  const query = update.callback_query as { data?: string } | undefined;
  if (query) return !(ownData?.(query.data ?? '') ?? false);
  const message = update.message as { text?: string } | undefined;
  const command = /^\/([A-Za-z0-9_]+)/.exec(message?.text ?? '')?.[1];
  return command !== undefined && command !== 'stickers_chatid' && command !== 'start';
}

/**
 * The setup command's own long polling (docs/requirements.md §16.1): each update looked at once, in order, and
 * confirmed at the end for the server that polls next. An offset confirms every update before it (Telegram's only way),
 * so the first look at what waits (`pending`) has none.
 */
export class UpdateFeed {
  /** The next update id to ask for: one past the last update looked at; undefined before the first. */
  private offset: number | undefined;
  private readonly buffer: RawUpdate[] = [];
  /** Updates for the server (presses, commands) setup looked at while it waited: they are gone for the server. */
  readonly takenFromServer: RawUpdate[] = [];

  constructor(
    private readonly telegram: TelegramGateway,
    private readonly clock: Clock,
    private readonly ownPress: (data: string) => boolean = () => false,
  ) {}

  /** What waits for the bot now, unconfirmed (kept in order for the waits that follow). */
  async pending(): Promise<{ ok: true; updates: RawUpdate[] } | { ok: false; failure: TelegramFailure }> {
    const result = await this.telegram.getUpdates({ timeoutSec: 0, allowedUpdates: SETUP_UPDATES });
    if (!result.ok) return { ok: false, failure: result };
    this.buffer.push(...result.value);
    return { ok: true, updates: result.value };
  }

  /** Forgets what `pending` read: the next poll starts after it, confirming it (the operator said to drop them). */
  skipBuffered(): void {
    const last = this.buffer.at(-1);
    if (last) this.offset = last.update_id + 1;
    this.buffer.length = 0;
  }

  /** Looks at updates, oldest first, until `pick` takes one, `until` passes or `signal` aborts; each looked at is consumed. */
  async next<T>(pick: (update: RawUpdate) => T | null, until: number, signal?: AbortSignal): Promise<Waited<T>> {
    for (;;) {
      for (let update = this.buffer.shift(); update; update = this.buffer.shift()) {
        this.offset = update.update_id + 1;
        const value = pick(update);
        if (value !== null) return { kind: 'found', value };
        if (isForTheServer(update, this.ownPress)) this.takenFromServer.push(update);
      }
      if (signal?.aborted) return { kind: 'aborted' };
      const left = until - this.clock.now();
      if (left <= 0) return { kind: 'timeout' };
      const timeoutSec = Math.min(POLL_SEC, Math.ceil(left / 1000));
      const result = await this.telegram.getUpdates({ offset: this.offset, timeoutSec, allowedUpdates: SETUP_UPDATES }, signal);
      if (signal?.aborted) return { kind: 'aborted' };
      if (!result.ok) return { kind: 'failed', failure: result };
      // An offset beyond every update also drops what came before it: keep only the ones not yet looked at.
      this.buffer.push(...result.value.filter((u) => this.offset === undefined || u.update_id >= this.offset));
    }
  }

  /**
   * Confirms every update looked at with one getUpdates from the next offset that does not wait: the server's first
   * poll neither gets them again nor meets a poll of ours still open (409). Those not looked at stay for the server.
   */
  async confirm(): Promise<{ ok: true } | { ok: false; failure: TelegramFailure }> {
    if (this.offset === undefined) return { ok: true };
    const result = await this.telegram.getUpdates({ offset: this.offset, timeoutSec: 0, limit: 1, allowedUpdates: SETUP_UPDATES });
    return result.ok ? { ok: true } : { ok: false, failure: result };
  }
}

/** What a wait found; null when it ended without (a timeout, Ctrl-C or Enter, a failure). */
export function waited<T>(w: Waited<T>): T | null {
  return w.kind === 'found' ? w.value : null;
}
