import type { Messages } from '../i18n';

/** The commands that erase or hand out personal data: only managers (or the leads group's administrators) may. */
type GuardedAction = 'forget' | 'export';

/** MANAGER_IDS leaves the user out, they do not administer the leads group, or Telegram could not tell. */
export type PermissionRefusal = 'not_manager' | 'not_admin' | 'admin_unknown';

/** A command the bot will not carry out, as a value: BotCommandsService decides on these, `refusalText` words them. */
export type CommandRefusal =
  /** Neither a leads chat nor the admin chat (every command but `/stickers_chatid`). */
  | { kind: 'refused'; reason: 'wrong_chat' }
  /** `/stickers_export` elsewhere than the admin chat: the file holds every contact. */
  | { kind: 'refused'; reason: 'not_admin_chat' }
  | { kind: 'refused'; reason: PermissionRefusal; action: GuardedAction }
  /** Not a lead number or contact (forget), or a number of days (export). */
  | { kind: 'refused'; reason: 'bad_arguments'; action: GuardedAction }
  /** `/stickers_chatid` in the private chat with the bot: no group to give the id of. */
  | { kind: 'refused'; reason: 'private_chat' }
  /** `/stickers_inbox` without LEADS_INBOX_URL. */
  | { kind: 'refused'; reason: 'inbox_not_configured' };

/** The one place a refusal becomes the text the user reads, in the catalogue's words. */
export function refusalText(refusal: CommandRefusal, t: Messages): string {
  const c = t.commands;
  const exporting = 'action' in refusal && refusal.action === 'export';
  switch (refusal.reason) {
    case 'wrong_chat':
      return c.wrongChat;
    case 'not_admin_chat':
      return c.exportWrongChat;
    case 'not_manager':
      return exporting ? c.exportNotManager : c.notManager;
    case 'not_admin':
      return exporting ? c.exportNotAdmin : c.notAdmin;
    case 'admin_unknown':
      return c.adminUnknown;
    case 'bad_arguments':
      return exporting ? c.exportUsage : c.forgetUsage;
    case 'private_chat':
      return c.chatIdPrivate;
    case 'inbox_not_configured':
      return t.inbox.notConfigured;
  }
}
