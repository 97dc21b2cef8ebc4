import type { RawUpdate } from '../telegram/telegram.gateway';

/** What an update says about a chat: the bot was added to it, or someone wrote in it (and in which topic). */
export interface ChatSighting {
  chat: { id: number; type: string; title?: string; is_forum?: boolean };
  /** The topic of a message (null: none, or General); undefined: not known (the bot was just added). */
  threadId: number | null | undefined;
  how: string;
  /** Who added the bot, or wrote the message; null when the update does not say. */
  by: { id: number; name: string } | null;
}

type Chat = ChatSighting['chat'];

const IN_CHAT = ['creator', 'administrator', 'member', 'restricted'];

interface TelegramUser {
  id: number;
  first_name?: string;
  last_name?: string;
  username?: string;
}

export function userName(user: Omit<TelegramUser, 'id'> | undefined): string {
  const full = [user?.first_name, user?.last_name].filter(Boolean).join(' ');
  return full || (user?.username ? `@${user.username}` : 'someone');
}

/** The chat an update shows, if it is a group the bot is in; null for anything else (a private message, a removal). */
export function sighting(update: RawUpdate, botId: number): ChatSighting | null {
  const change = update.my_chat_member as
    { chat: Chat; from?: TelegramUser; new_chat_member: { status: string; is_member?: boolean; user?: { id: number } } } | undefined;
  if (change) {
    const member = change.new_chat_member;
    if (member.user && member.user.id !== botId) return null;
    if (!IN_CHAT.includes(member.status) || member.is_member === false) return null;
    if (change.chat.type !== 'group' && change.chat.type !== 'supergroup') return null;
    const by = person(change.from);
    return { chat: change.chat, threadId: undefined, how: `the bot was added to it by ${named(by)}`, by };
  }
  const message = update.message as
    { chat: Chat; from?: TelegramUser; message_thread_id?: number; is_topic_message?: boolean; text?: string } | undefined;
  if (!message || (message.chat.type !== 'group' && message.chat.type !== 'supergroup')) return null;
  const threadId = message.is_topic_message && message.message_thread_id ? message.message_thread_id : null;
  const by = person(message.from);
  return { chat: message.chat, threadId, how: `${named(by)} wrote in it`, by };
}

function person(user: TelegramUser | undefined): ChatSighting['by'] {
  return user ? { id: user.id, name: userName(user) } : null;
}

const named = (by: ChatSighting['by']) => (by ? `${by.name} (user id ${by.id})` : 'someone');
