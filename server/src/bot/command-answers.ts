import type { Messages } from '../i18n';

/** MANAGER_IDS leaves the user out, they do not administer the leads group, or Telegram could not tell. */
export type PermissionRefusal = 'not_manager' | 'not_admin' | 'admin_unknown';

/**
 * A command the bot will not carry out, as a value: BotCommandsService decides on these, `refusalText` words them.
 * `wrong_chat`: neither a leads chat nor the admin chat; `not_admin_chat`: an export elsewhere than the admin chat (the
 * file holds every contact); `private_chat`: `/stickers_chatid` where there is no group; `inbox_not_configured`: no
 * LEADS_INBOX_URL; `bad_arguments`: no lead number or contact (forget), no number of days (export).
 */
export type CommandRefusal =
  | { kind: 'refused'; reason: 'wrong_chat' | 'not_admin_chat' | 'private_chat' | 'inbox_not_configured' }
  | { kind: 'refused'; reason: PermissionRefusal | 'bad_arguments'; action: 'forget' | 'export' };

/** The one place a refusal becomes the text the user reads, in the catalogue's words. */
export function refusalText(refusal: CommandRefusal, t: Messages): string {
  const c = t.commands;
  const exporting = 'action' in refusal && refusal.action === 'export';
  const texts: Record<CommandRefusal['reason'], string> = {
    wrong_chat: c.wrongChat,
    not_admin_chat: c.exportWrongChat,
    not_manager: exporting ? c.exportNotManager : c.notManager,
    not_admin: exporting ? c.exportNotAdmin : c.notAdmin,
    admin_unknown: c.adminUnknown,
    bad_arguments: exporting ? c.exportUsage : c.forgetUsage,
    private_chat: c.chatIdPrivate,
    inbox_not_configured: t.inbox.notConfigured,
  };
  return texts[refusal.reason];
}
