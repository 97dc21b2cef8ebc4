/**
 * The t.me link of a card: a supergroup's message (`-100` + the chat's own id) is `https://t.me/c/<id>/<message>`, in a
 * forum topic `https://t.me/c/<id>/<topic>/<message>`; a public chat by its @name is `https://t.me/<name>/<message>`.
 * A basic group's messages have no link: null, as for a lead without a card.
 */
export function cardUrl(chatId: string | null, messageId: number | null, threadId: number | null = null): string | null {
  if (chatId === null || messageId === null) return null;
  const topic = threadId !== null ? `${threadId}/` : '';
  const supergroup = /^-100(\d+)$/.exec(chatId);
  if (supergroup) return `https://t.me/c/${supergroup[1]}/${topic}${messageId}`;
  const named = /^@([A-Za-z][A-Za-z0-9_]{4,31})$/.exec(chatId);
  if (named) return `https://t.me/${named[1]}/${topic}${messageId}`;
  return null;
}
