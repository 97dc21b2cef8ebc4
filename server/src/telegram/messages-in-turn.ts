import AsyncLock from 'async-lock';
import type { MiddlewareFn } from 'telegraf';
import type { BotContext } from './telegram.gateway';

/**
 * A chat's messages handled one after another, in the order they came: telegraf handles a getUpdates batch all at once,
 * and a member's replies must reach the visitor (a visitor's messages the group) in the order they were written.
 * Presses and other updates go at once; other chats are not held.
 */
export function messagesInTurn(): MiddlewareFn<BotContext> {
  const chats = new AsyncLock({ maxPending: Infinity });
  return (ctx, next) => (ctx.message && ctx.chat ? chats.acquire(String(ctx.chat.id), next) : next());
}
