/** Telegram refuses a message whose text, after entity parsing, is longer than this many UTF-16 code units. */
export const TELEGRAM_TEXT_MAX = 4096;

const NAMED: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"' };
const TAG_OR_ENTITY = /<[^>]*>|&(lt|gt|amp|quot|#\d{1,7}|#x[0-9a-fA-F]{1,6});/g;

/** What Telegram measures against TELEGRAM_TEXT_MAX: UTF-16 units of the HTML text, tags removed, entities decoded. */
export function telegramTextLength(html: string): number {
  const text = html.replace(TAG_OR_ENTITY, (match: string, entity: string | undefined) => {
    if (entity === undefined) return '';
    if (NAMED[entity] !== undefined) return NAMED[entity];
    const code = entity[1] === 'x' ? parseInt(entity.slice(2), 16) : parseInt(entity.slice(1), 10);
    return code <= 0x10ffff ? String.fromCodePoint(code) : match;
  });
  return text.length;
}
