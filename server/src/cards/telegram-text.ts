/** Telegram refuses a message whose text, after entity parsing, is longer than this many UTF-16 code units. */
export const TELEGRAM_TEXT_MAX = 4096;

const NAMED: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"' };
const TAG_OR_ENTITY = /<[^>]*>|&(lt|gt|amp|quot|#\d{1,7}|#x[0-9a-fA-F]{1,6});/g;

/** The text Telegram shows for a `parse_mode: HTML` message: tags removed, the four named and numeric entities decoded. */
export function telegramText(html: string): string {
  return html.replace(TAG_OR_ENTITY, (match: string, entity: string | undefined) => {
    if (entity === undefined) return '';
    if (NAMED[entity] !== undefined) return NAMED[entity];
    const code = entity[1] === 'x' ? parseInt(entity.slice(2), 16) : parseInt(entity.slice(1), 10);
    return code <= 0x10ffff ? String.fromCodePoint(code) : match;
  });
}

/** What Telegram measures against `TELEGRAM_TEXT_MAX`: UTF-16 code units of the text after entity parsing. */
export function telegramTextLength(html: string): number {
  return telegramText(html).length;
}
