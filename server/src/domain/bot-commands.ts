/** The bot's commands, in the order of its menu; their descriptions are the catalogue's `commands.menu`. */
export const BOT_COMMAND_NAMES = [
  'stickers_new',
  'stickers_stats',
  'stickers_forget',
  'stickers_export',
  'stickers_chatid',
  'stickers_inbox',
] as const;
export type BotCommand = (typeof BOT_COMMAND_NAMES)[number];

/** `/stickers_export [days]`: 7 days unless told, at most a year. */
export const EXPORT_DAYS_DEFAULT = 7;
export const EXPORT_DAYS_MAX = 365;

/** The `/start` parameter of the group's inbox button: the private chat opens on `/stickers_inbox`'s answer there. */
export const INBOX_START = 'inbox';
