/** The Telegram account a visitor bound to a lead by opening its "Continue in Telegram" link in the bot. */
export interface TelegramAccount {
  id: number;
  username: string | null;
  first_name: string | null;
  last_name: string | null;
}

/** The account as the card and the trace name it: `@username`, else the name, else the id. */
export function accountName(account: TelegramAccount): string {
  if (account.username) return `@${account.username}`;
  const name = [account.first_name, account.last_name].filter(Boolean).join(' ');
  return name || `id ${account.id}`;
}
