/** The t.me link of a card: `t.me/c/<id>/[<topic>/]<message>` in a supergroup, `t.me/<name>/…` in a public chat; else null. */
export function cardUrl(chatId: string | null, messageId: number | null, threadId: number | null = null): string | null {
  if (chatId === null || messageId === null) return null;
  const topic = threadId !== null ? `${threadId}/` : '';
  const supergroup = /^-100(\d+)$/.exec(chatId)?.[1];
  const place = supergroup ? `c/${supergroup}` : /^@([A-Za-z][A-Za-z0-9_]{4,31})$/.exec(chatId)?.[1];
  return place ? `https://t.me/${place}/${topic}${messageId}` : null;
}
