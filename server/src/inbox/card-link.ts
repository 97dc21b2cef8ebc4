/** The t.me link of a card: `t.me/c/<id>/[<topic>/]<message>` in a supergroup, `t.me/<name>/…` in a public chat; else null. */
export function cardUrl(chatId: string | null, messageId: number | null, threadId: number | null = null): string | null {
  if (chatId === null || messageId === null) return null;
  const topic = threadId !== null ? `${threadId}/` : '';
  const supergroup = /^-100(\d+)$/.exec(chatId);
  if (supergroup) return `https://t.me/c/${supergroup[1]}/${topic}${messageId}`;
  const named = /^@([A-Za-z][A-Za-z0-9_]{4,31})$/.exec(chatId);
  if (named) return `https://t.me/${named[1]}/${topic}${messageId}`;
  return null;
}
