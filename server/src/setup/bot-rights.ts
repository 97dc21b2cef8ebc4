import type { TelegramFailure } from '../telegram/telegram-result';
import type { BotIdentity, ChatInfo, ChatMemberInfo, TelegramGateway } from '../telegram/telegram.gateway';

/** What setup and the doctor share: their lines (`FAIL` counted), the token's check and the bot's rights in a chat. */
export class CheckLines {
  problems = 0;

  constructor(readonly say: (line: string) => void) {}

  ok = (text: string): void => this.say(`ok    ${text}`);
  warn = (text: string): void => this.say(`warn  ${text}`);
  note = (text: string): void => this.say(`note  ${text}`);
  fail = (text: string): void => {
    this.problems += 1;
    this.say(`FAIL  ${text}`);
  };

  /** getMe: the bot, or null after a FAIL line; `fix` follows "copy it again from @BotFather" when Telegram does not know the token. */
  async checkToken(telegram: TelegramGateway, fix: string, unanswered: (description: string) => string): Promise<BotIdentity | null> {
    const me = await telegram.call('getMe', {});
    if (!me.ok) {
      const code = me.kind === 'refused' ? me.description.slice(0, 3) : '';
      const token = 'TELEGRAM_BOT_TOKEN: Telegram does not know this token';
      if (code === '401') this.fail(`${token} (${me.description}): copy it again from @BotFather${fix}`);
      // Telegram's answer to a malformed token, and any web server's to an API root with a wrong path.
      else if (code === '404')
        this.fail(
          `${token}, or TELEGRAM_API_ROOT is no Bot API (${me.description}): copy the token again from @BotFather${fix}, or check TELEGRAM_API_ROOT`,
        );
      else this.fail(unanswered(me.description));
      return null;
    }
    this.ok(`TELEGRAM_BOT_TOKEN: the bot @${me.value.username ?? '?'} (id ${me.value.id})`);
    return me.value;
  }

  /** getChat and the bot's getChatMember: the chat and the rights when it may post and edit there, else undefined after a FAIL line. */
  async checkRights(
    telegram: TelegramGateway,
    botId: number,
    chatId: string,
    unreachable: (failure: TelegramFailure) => string,
    named: (chat: ChatInfo) => string,
  ) {
    const chat = await telegram.getChat(chatId);
    if (!chat.ok) return this.fail(unreachable(chat));
    const name = named(chat.value);
    const member = await telegram.getChatMember(chatId, botId);
    if (!member.ok) return this.fail(`${name}: the bot's rights could not be read (${member.description})`);
    const rights = botRights(chat.value, member.value);
    if (rights.problem) return this.fail(`${name}: ${rights.problem}`);
    this.ok(`${name}: the bot is ${rights.role}, may send and edit its messages`);
    return { chat: chat.value, manageTopics: rights.manageTopics };
  }
}

const granted = (v: unknown) => v === true;

/**
 * What the bot may do in a chat (docs/requirements.md §16.4): `problem`, why it cannot post or edit cards there and
 * what to change (null: it can); `role` in the operator's words; `manageTopics`, null when the chat has no topics.
 */
function botRights(chat: ChatInfo, member: ChatMemberInfo) {
  const channel = chat.type === 'channel';
  const topics = (may: boolean) => (chat.type === 'supergroup' && chat.is_forum === true ? may : null);
  switch (member.status) {
    case 'creator':
    case 'administrator':
      return {
        role: 'an administrator',
        manageTopics: topics(member.status === 'creator' || granted(member.can_manage_topics)),
        problem:
          channel && !granted(member.can_post_messages)
            ? 'the bot is an administrator of the channel without "Post messages": give it that right'
            : channel && !granted(member.can_edit_messages)
              ? 'the bot is an administrator of the channel without "Edit messages of others": give it that right (cards change after a press)'
              : null,
      };
    case 'member':
      return {
        role: 'a member',
        manageTopics: topics(granted(chat.permissions?.can_manage_topics)),
        problem: channel
          ? 'in a channel only administrators post: make the bot an administrator with "Post messages" and "Edit messages of others"'
          : chat.permissions?.can_send_messages === false
            ? 'members may not send messages in this group and the bot is a plain member: make it an administrator, or let members send messages (group settings → Permissions)'
            : null,
      };
    case 'restricted':
      return {
        role: 'restricted',
        manageTopics: topics(granted(member.can_manage_topics)),
        problem:
          member.is_member === false
            ? 'the bot is not in the chat (restricted, and not a member): add it again'
            : !granted(member.can_send_messages)
              ? 'the bot is restricted there and may not send messages: lift the restriction (group settings → Members → the bot) or make it an administrator'
              : null,
      };
    case 'kicked':
      return { role: 'removed', manageTopics: null, problem: 'the bot was removed (banned) from the chat: unban it and add it again' };
    default:
      return { role: 'not a member', manageTopics: null, problem: 'the bot is not in the chat (it left or was removed): add it again' };
  }
}
