/**
 * Telegram's HTML parse mode, as strict as Telegram: only its tags, properly nested, entities escaped.
 * Returns the plain text and the entities (offsets in UTF-16 code units), or the error Telegram would give.
 */
export interface MessageEntity {
  type: string;
  offset: number;
  length: number;
  url?: string;
  language?: string;
  user?: unknown;
  custom_emoji_id?: string;
}

const TAGS: Record<string, string> = {
  b: 'bold',
  strong: 'bold',
  i: 'italic',
  em: 'italic',
  u: 'underline',
  ins: 'underline',
  s: 'strikethrough',
  strike: 'strikethrough',
  del: 'strikethrough',
  'tg-spoiler': 'spoiler',
  a: 'text_link',
  code: 'code',
  pre: 'pre',
  blockquote: 'blockquote',
  span: 'spoiler',
  'tg-emoji': 'custom_emoji',
};

const NAMED: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"' };

export type ParseResult = { ok: true; text: string; entities: MessageEntity[] } | { ok: false; error: string };

export function parseHtml(input: string): ParseResult {
  let text = '';
  const entities: MessageEntity[] = [];
  const stack: { tag: string; start: number; entity: MessageEntity }[] = [];
  let i = 0;
  const fail = (why: string): ParseResult => ({ ok: false, error: `Bad Request: can't parse entities: ${why}` });
  while (i < input.length) {
    const ch = input[i];
    if (ch === '&') {
      const semi = input.indexOf(';', i);
      const name = semi > i ? input.slice(i + 1, semi) : '';
      if (NAMED[name] !== undefined) {
        text += NAMED[name];
        i = semi + 1;
      } else if (/^#\d{1,7}$/.test(name) || /^#x[0-9a-fA-F]{1,6}$/.test(name)) {
        const code = name[1] === 'x' ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10);
        if (code > 0x10ffff) return fail(`Unsupported HTML entity at byte offset ${i}`);
        text += String.fromCodePoint(code);
        i = semi + 1;
      } else {
        // Telegram keeps an unknown "&" as text.
        text += '&';
        i += 1;
      }
      continue;
    }
    if (ch === '<') {
      const close = input.indexOf('>', i);
      if (close < 0) return fail(`Unclosed start tag at byte offset ${i}`);
      const inner = input.slice(i + 1, close);
      if (inner.startsWith('/')) {
        const name = inner.slice(1).trim().toLowerCase();
        const top = stack.pop();
        if (!top || top.tag !== name) {
          return fail(`Unmatched end tag at byte offset ${i}, expected "</${top?.tag ?? ''}>", found "</${name}>"`);
        }
        top.entity.length = text.length - top.start;
        if (top.entity.length > 0) entities.push(top.entity);
      } else {
        const m = /^([a-zA-Z][a-zA-Z0-9-]*)((?:\s+[a-zA-Z-]+\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'>]+))*)\s*$/.exec(inner);
        if (!m) return fail(`Unsupported start tag "${inner.split(/\s/)[0]}" at byte offset ${i}`);
        const tag = m[1].toLowerCase();
        const type = TAGS[tag];
        if (!type) return fail(`Unsupported start tag "${tag}" at byte offset ${i}`);
        const attrs: Record<string, string> = {};
        for (const a of m[2].matchAll(/([a-zA-Z-]+)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))/g)) {
          attrs[a[1].toLowerCase()] = a[2] ?? a[3] ?? a[4] ?? '';
        }
        const entity: MessageEntity = { type, offset: text.length, length: 0 };
        if (tag === 'a') {
          if (!attrs.href) return fail(`Wrong or missing href in "a" tag at byte offset ${i}`);
          entity.url = attrs.href.replace(/&amp;/g, '&');
        }
        if (tag === 'span' && attrs.class !== 'tg-spoiler') return fail(`Tag "span" must have class "tg-spoiler" at byte offset ${i}`);
        stack.push({ tag, start: text.length, entity });
      }
      i = close + 1;
      continue;
    }
    if (ch === '>') {
      // Telegram accepts a bare ">" in text.
      text += ch;
      i += 1;
      continue;
    }
    text += ch;
    i += 1;
  }
  if (stack.length > 0) return fail(`Can't find end tag corresponding to start tag "${stack[stack.length - 1].tag}"`);
  entities.sort((a, b) => a.offset - b.offset);
  return { ok: true, text, entities };
}
