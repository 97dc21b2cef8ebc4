import { Injectable } from '@nestjs/common';
import { Clock } from '../clock/clock';

/** Telegram's limits for a bot (its FAQ): about one message a second into one chat, about 30 a second in all. */
export const PER_CHAT_INTERVAL_MS = 1_000;
export const PER_BOT_PER_SECOND = 30;

/**
 * Spaces out the conversation's sends (docs/architecture.md, "The conversation") so they never meet Telegram's 429 and
 * its flood pause, which stops every card too. In memory, per instance: a row that must wait is deferred, not failed.
 */
@Injectable()
export class ChatPacer {
  private readonly lastByChat = new Map<string, number>();
  private recent: number[] = [];

  constructor(private readonly clock: Clock) {}

  /** When a send into `chatId` may go: now, or the time it must wait for. */
  slot(chatId: string): number {
    const now = this.clock.now();
    this.recent = this.recent.filter((at) => at > now - 1_000);
    let at = now;
    const last = this.lastByChat.get(chatId);
    if (last !== undefined) at = Math.max(at, last + PER_CHAT_INTERVAL_MS);
    if (this.recent.length >= PER_BOT_PER_SECOND) at = Math.max(at, this.recent[this.recent.length - PER_BOT_PER_SECOND] + 1_000);
    return at;
  }

  /** A send into `chatId` went out now. */
  sent(chatId: string): void {
    const now = this.clock.now();
    this.lastByChat.set(chatId, now);
    this.recent.push(now);
    if (this.lastByChat.size > 10_000) {
      for (const [chat, at] of this.lastByChat) if (at <= now - PER_CHAT_INTERVAL_MS) this.lastByChat.delete(chat);
    }
  }
}
