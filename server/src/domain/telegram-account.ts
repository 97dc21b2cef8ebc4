/** The Telegram account a visitor bound to a lead by opening its "Continue in Telegram" link in the bot. */
export interface TelegramAccount {
  id: number;
  username: string | null;
  first_name: string | null;
  last_name: string | null;
}

type Names = { first_name?: string | null; last_name?: string | null; username?: string | null };

/** First and last name as one; '' without either. */
export const fullName = (user: Names) => [user.first_name, user.last_name].filter(Boolean).join(' ');

/** A person as a press or a message names them: the full name, else `@username`; '' without either. */
export const personName = (user: Names) => fullName(user) || (user.username ? `@${user.username}` : '');

/** The account as the card and the trace name it: `@username`, else the name, else the id. */
export function accountName(account: TelegramAccount): string {
  if (account.username) return `@${account.username}`;
  return fullName(account) || `id ${account.id}`;
}
