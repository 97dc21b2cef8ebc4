import type { BotIdentity, RawUpdate } from '../telegram/telegram.gateway';
import type { SetupSession } from './setup-session';
import { personName, type TelegramAccount } from '../domain/telegram-account';

/** A group an update shows: the bot added to it (`threadId` undefined: not known), or a message in it (null: no topic, or General). */
interface ChatSighting {
  chat: { id: number; type: string; title?: string; is_forum?: boolean };
  threadId: number | null | undefined;
  how: string;
  byId: number | undefined;
}

type Chat = ChatSighting['chat'];

const IN_CHAT = ['creator', 'administrator', 'member', 'restricted'];

/** A user as an update carries them: the account's fields, the id always. */
type TelegramUser = Partial<TelegramAccount> & { id: number };

export function userName(user: Partial<TelegramAccount> | undefined): string {
  return personName(user ?? {}) || 'someone';
}

/** The chat an update shows, if it is a group the bot is in; null for anything else (a private message, a removal). */
function sighting(update: RawUpdate, botId: number): ChatSighting | null {
  const change = update.my_chat_member as
    { chat: Chat; from?: TelegramUser; new_chat_member: { status: string; is_member?: boolean; user?: { id: number } } } | undefined;
  if (change) {
    const member = change.new_chat_member;
    if (member.user && member.user.id !== botId) return null;
    if (!IN_CHAT.includes(member.status) || member.is_member === false) return null;
    if (change.chat.type !== 'group' && change.chat.type !== 'supergroup') return null;
    return { chat: change.chat, threadId: undefined, how: `the bot was added to it by ${named(change.from)}`, byId: change.from?.id };
  }
  const message = update.message as
    { chat: Chat; from?: TelegramUser; message_thread_id?: number; is_topic_message?: boolean; text?: string } | undefined;
  if (!message || (message.chat.type !== 'group' && message.chat.type !== 'supergroup')) return null;
  const threadId = message.is_topic_message && message.message_thread_id ? message.message_thread_id : null;
  return { chat: message.chat, threadId, how: `${named(message.from)} wrote in it`, byId: message.from?.id };
}

const named = (user: TelegramUser | undefined) => (user ? `${userName(user)} (user id ${user.id})` : 'someone');

/** A chat the operator pointed setup at; `threadId` null: the chat itself (a forum's General topic). */
export interface ChatChoice {
  chatId: string;
  title: string;
  forum: boolean;
  threadId: number | null;
}

export const describeChat = (c: ChatChoice) =>
  `«${c.title}» (${c.chatId})${c.forum ? (c.threadId ? `, topic ${c.threadId}` : ', its General topic') : ''}`;

/** The leads chat (`other` null) or the admin chat (another chat, or another topic of the leads group), found from updates. */
export async function chooseChat(session: SetupSession, me: BotIdentity, other: ChatChoice | null): Promise<ChatChoice | null> {
  const { options } = session;
  const username = me.username ? `@${me.username}` : 'the bot';
  session.say('');
  if (!other) {
    session.say('1. The leads group (the cards go there).');
    session.say(`   Add ${username} to the group (group → Add members), or, if it is there already, send /stickers_chatid in it.`);
    session.say('   A group with topics: send /stickers_chatid in the topic for the cards.');
  } else {
    session.say('2. The admin chat (alerts, the daily digest, /stickers_export), optional.');
    session.say(`   Send /stickers_chatid in it: another group (add ${username} first), or another topic of «${other.title}».`);
    if (session.interactive) session.say('   Press Enter to go on without an admin chat.');
  }
  if (other && !session.interactive && options.from === undefined) {
    session.note(
      'no admin chat: without a terminal setup takes an admin chat only with --from (set ADMIN_CHAT_ID later; /stickers_chatid tells it)',
    );
    return null;
  }
  session.say(`   Waiting up to ${options.timeout} s…`);
  for (;;) {
    const seen = await session.wait((u) => {
      const s = sighting(u, me.id);
      if (!s) {
        const message = u.message as { chat?: { type?: string } } | undefined;
        if (message?.chat?.type === 'private')
          session.note('a private message to the bot: the chat to set up is a group, add the bot there');
        return null;
      }
      const inLeadsChat = other !== null && String(s.chat.id) === other.chatId;
      if (inLeadsChat && (s.threadId === undefined || s.threadId === other.threadId)) {
        if (s.threadId !== undefined)
          session.note(`that is the leads ${other.threadId ? 'topic' : 'chat'}: the admin chat is another chat or topic`);
        return null;
      }
      const chat = `«${s.chat.title ?? s.chat.id}» (${s.chat.id})`;
      if (!other && options.chat !== undefined && String(s.chat.id) !== options.chat) {
        session.note(`${chat}: ${s.how}; not the chat of --chat ${options.chat}: ignored`);
        return null;
      }
      if (!inLeadsChat && options.from !== undefined && s.byId !== options.from) {
        session.note(`${chat}: ${s.how}; not by --from ${options.from}: ignored`);
        return null;
      }
      return s;
    }, other !== null);
    const s = seen.value;
    if (!s) {
      if (other && seen.kind !== 'failed' && !session.stopped) {
        session.note('no admin chat: alerts and the digest are only logged (set ADMIN_CHAT_ID later; /stickers_chatid tells it)');
      } else if (seen.kind === 'timeout') {
        session.fail(
          `no group showed up within ${options.timeout} s: add the bot to the group (or send /stickers_chatid there) and run setup again`,
        );
      }
      return null;
    }
    const choice: ChatChoice = {
      chatId: String(s.chat.id),
      title: s.chat.title ?? String(s.chat.id),
      forum: s.chat.is_forum === true,
      threadId: s.threadId ?? null,
    };
    const count = await session.telegram.call('getChatMemberCount', { chat_id: choice.chatId });
    const members = count.ok ? `${count.value} member${count.value === 1 ? '' : 's'}` : `members unknown (${count.description})`;
    const found = `«${choice.title}» (${choice.chatId})${choice.threadId ? `, topic ${choice.threadId}` : ''}: ${members}; ${s.how}`;
    // A group the operator did not name (--chat, --from) is taken only when they say so: it may be a stranger's.
    const named = options.chat !== undefined || options.from !== undefined || (other !== null && choice.chatId === other.chatId);
    if (!named) {
      session.say(`   ${found}`);
      if (!(await session.yes(`Take it as ${other ? 'the admin chat' : 'the leads group'}? [y/N] `))) {
        session.note(`«${choice.title}» not taken: waiting for another group (add the bot to yours, or send /stickers_chatid in it)`);
        continue;
      }
    }
    session.ok(found);
    if (choice.forum && s.threadId === undefined) choice.threadId = await chooseTopic(session, choice);
    return choice;
  }
}

/** A forum: the topic is the one a message is written in (General: none). */
async function chooseTopic(session: SetupSession, choice: ChatChoice): Promise<number | null> {
  const { options } = session;
  session.say(
    `   «${choice.title}» has topics: send /stickers_chatid in the topic to use (in General for none). Waiting up to ${options.timeout} s…`,
  );
  const seen = await session.wait((u) => {
    const message = u.message as { chat?: { id: number }; message_thread_id?: number; is_topic_message?: boolean } | undefined;
    if (!message || String(message.chat?.id) !== choice.chatId) return null;
    return { threadId: message.is_topic_message && message.message_thread_id ? message.message_thread_id : null };
  }, false);
  const topic = seen.value;
  if (!topic) {
    if (seen.kind === 'timeout') session.note(`no message in a topic within ${options.timeout} s: the chat's General topic it is`);
    return null;
  }
  session.ok(topic.threadId ? `topic ${topic.threadId} of «${choice.title}»` : `the General topic of «${choice.title}»`);
  return topic.threadId;
}
