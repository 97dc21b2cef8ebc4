import type { ChatInfo, ChatMemberInfo } from '../telegram/telegram.gateway';

const granted = (v: unknown) => v === true;

/**
 * What the bot may do in a chat (setup and doctor ask the same): `problem`, why it cannot post or edit cards there and
 * what to change (null: it can); `role` in the operator's words; `manageTopics`, null when the chat has no topics.
 * §16.4 of docs/requirements.md: an administrator posts anywhere (in a channel only with `can_post_messages`, and edits
 * there only with `can_edit_messages`); a plain member posts unless the group's permissions keep members from writing;
 * a restricted bot only with its own `can_send_messages`.
 */
export function botRights(chat: ChatInfo, member: ChatMemberInfo) {
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
