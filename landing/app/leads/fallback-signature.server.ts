import { createHash, createHmac } from 'node:crypto';

/**
 * The signature of a fallback message claimed by a replay (`late.fallback.sig`): only someone holding the bot token
 * the fallback message was sent with can say "this message is that request's fallback", so the server can trust the
 * claim before it turns that message into the lead's card.
 *
 * key = SHA-256 of the UTF-8 string "stickers-leads fallback\n" + the bot token;
 * sig = base64url (no padding) of HMAC-SHA256(key, `${request_id}\n${chat_id}\n${message_id}`), `chat_id` as sent in
 * `late.fallback.chat_id`, `message_id` in decimal. The server computes the same from its TELEGRAM_BOT_TOKEN.
 */
export function fallbackSignature(botToken: string, requestId: string, chatId: string, messageId: number): string {
  const key = createHash('sha256').update(`stickers-leads fallback\n${botToken}`, 'utf8').digest();
  return createHmac('sha256', key).update(`${requestId}\n${chatId}\n${messageId}`, 'utf8').digest('base64url');
}
