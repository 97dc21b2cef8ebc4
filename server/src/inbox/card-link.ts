/**
 * The t.me link of a card: `<root>/c/<id>/[<topic>/]<message>` in a supergroup, `<root>/<name>/…` in a public chat; else
 * null. `root` is LEADS_TELEGRAM_LINK_ROOT: t.me, or the sandbox's stand-in for it in development.
 */
export function cardUrl(root: string, chatId: string | null, messageId: number | null, threadId: number | null = null): string | null {
  if (chatId === null || messageId === null) return null;
  const topic = threadId !== null ? `${threadId}/` : '';
  const supergroup = /^-100(\d+)$/.exec(chatId)?.[1];
  const place = supergroup ? `c/${supergroup}` : /^@([A-Za-z][A-Za-z0-9_]{4,31})$/.exec(chatId)?.[1];
  return place ? `${root}/${place}/${topic}${messageId}` : null;
}
