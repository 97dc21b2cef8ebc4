import type { ChatInfo, ChatMemberInfo } from '../telegram/telegram.gateway';

/** What the bot may do in a chat, read from getChat and getChatMember of the bot (setup and doctor ask the same). */
export interface BotRights {
  /** A member, an administrator, or restricted but still in the chat. */
  inChat: boolean;
  admin: boolean;
  /** Post a card (sendMessage). */
  send: boolean;
  /** Edit its own messages (a card after a press): always in a group; in a channel only with `can_edit_messages`. */
  edit: boolean;
  /** Create, close and reopen topics; null when the chat has no topics. */
  manageTopics: boolean | null;
  /** Why the bot cannot post or edit cards there, and what to change; null when it can. */
  problem: string | null;
  /** The status in the operator's words: "an administrator", "a member"… */
  role: string;
}

const granted = (v: unknown) => v === true;

/**
 * docs/requirements.md §16.4 (the rights the bot needs): the bot's rights in one chat. An administrator
 * posts anywhere (in a channel only with `can_post_messages`); a plain member posts unless the group's permissions
 * keep members from writing; a restricted bot only with its own `can_send_messages`.
 */
export function botRights(chat: ChatInfo, member: ChatMemberInfo): BotRights {
  const forum = chat.type === 'supergroup' && chat.is_forum === true;
  const channel = chat.type === 'channel';
  const base = {
    inChat: true,
    admin: false,
    send: false,
    edit: false,
    manageTopics: null as boolean | null,
    problem: null as string | null,
  };
  switch (member.status) {
    case 'creator':
    case 'administrator': {
      const send = !channel || granted(member.can_post_messages);
      const edit = !channel || granted(member.can_edit_messages);
      return {
        ...base,
        admin: true,
        send,
        edit,
        manageTopics: forum ? member.status === 'creator' || granted(member.can_manage_topics) : null,
        problem: !send
          ? 'the bot is an administrator of the channel without "Post messages": give it that right'
          : !edit
            ? 'the bot is an administrator of the channel without "Edit messages of others": give it that right (cards change after a press)'
            : null,
        role: 'an administrator',
      };
    }
    case 'member': {
      const send = !channel && chat.permissions?.can_send_messages !== false;
      return {
        ...base,
        send,
        edit: send,
        manageTopics: forum ? granted(chat.permissions?.can_manage_topics) : null,
        problem: channel
          ? 'in a channel only administrators post: make the bot an administrator with "Post messages" and "Edit messages of others"'
          : send
            ? null
            : 'members may not send messages in this group and the bot is a plain member: make it an administrator, or let members send messages (group settings → Permissions)',
        role: 'a member',
      };
    }
    case 'restricted': {
      const inChat = member.is_member !== false;
      const send = inChat && granted(member.can_send_messages);
      return {
        ...base,
        inChat,
        send,
        edit: send,
        manageTopics: forum ? granted(member.can_manage_topics) : null,
        problem: !inChat
          ? 'the bot is not in the chat (restricted, and not a member): add it again'
          : send
            ? null
            : 'the bot is restricted there and may not send messages: lift the restriction (group settings → Members → the bot) or make it an administrator',
        role: 'restricted',
      };
    }
    case 'kicked':
      return { ...base, inChat: false, problem: 'the bot was removed (banned) from the chat: unban it and add it again', role: 'removed' };
    default:
      return { ...base, inChat: false, problem: 'the bot is not in the chat (it left or was removed): add it again', role: 'not a member' };
  }
}
