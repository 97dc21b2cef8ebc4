import { FIELD_UNITS_MAX } from '@stickers/shared';
import { parseHtml } from '@stickers/telegram-sandbox';
import { LEAD_STATUSES } from '../domain/lead-status';
import { TELEGRAM_TEXT_MAX } from '../telegram/telegram.gateway';
import { type CardLead, type CardRepeat, QUOTE_BAR, renderCard, renderMinimalCard, shorten, telegramTextLength } from './card.renderer';
import { ru } from '../i18n/ru';
import { statusButtons } from './lead-statuses';

const lead: CardLead = {
  id: 42,
  name: 'Анна',
  telegram: '@anna_k',
  phone: '+79991234567',
  date: '14 февраля',
  guests: '30',
  comment: 'Свадьба',
  status: 'new',
  created_at: Date.UTC(2026, 10, 29, 9, 0),
  anonymised_at: null,
};
const options = { pii: true, timezone: 'Europe/Moscow', messages: ru };
const { minimalNote: MINIMAL_CARD_NOTE, piiHidden: PII_HIDDEN_LINE, repeatHidden: REPEAT_HIDDEN_LINE } = ru.card;
const { repeatByPhone: REPEAT_BY_PHONE_WARNING, repeatByUsername: REPEAT_BY_USERNAME_WARNING } = ru.card;

describe('renderCard (requirements §4.8, §4.9)', () => {
  it('starts with the header and shows the time in LEADS_TIMEZONE', () => {
    const { plain } = renderCard(lead, [], options);
    expect(plain.split('\n').slice(0, 2)).toEqual(['🆕 Заявка #42', '🕒 29.11.2026 12:00']);
    expect(renderCard(lead, [], { ...options, timezone: 'UTC' }).plain).toContain('🕒 29.11.2026 09:00');
  });

  it.each(LEAD_STATUSES)('status %s: its label and exactly its buttons, callback_data within 64 bytes', (status) => {
    const card = renderCard({ ...lead, status }, [], options);
    const buttons = card.keyboard.inline_keyboard[0];
    expect(buttons.map((b) => b.text)).toEqual(statusButtons(ru, status).map((b) => b.text));
    for (const b of buttons) {
      expect('callback_data' in b && Buffer.byteLength(b.callback_data)).toBeLessThanOrEqual(64);
    }
  });

  it('names who changed the status and when', () => {
    const card = renderCard(
      { ...lead, status: 'in_progress', status_changed_by: 'Мария', status_changed_at: Date.UTC(2026, 10, 29, 10, 30) },
      [],
      options,
    );
    expect(card.plain).toContain('Статус: 🛠 В работе — Мария, 29.11.2026 13:30');
  });

  it('with PII off, no personal field is shown (date and guests are free text too), nor in repeat blocks', () => {
    const free = { ...lead, date: 'Иванова Анна, ул. Ленина 5', guests: 'паспорт 4510 123456' };
    const card = renderCard(free, [{ created_at: lead.created_at + 1000, changes: { phone: '+70000000000', guests: '40' } }], {
      ...options,
      pii: false,
    });
    for (const value of ['Анна', '@anna_k', '+79991234567', 'Ленина', '4510', 'Свадьба', '+70000000000', 'Гостей', 'Дата'])
      expect(card.plain).not.toContain(value);
    expect(card.plain).toContain(PII_HIDDEN_LINE);
    expect(card.plain).toContain(REPEAT_HIDDEN_LINE);
    expect(card.keyboard.inline_keyboard).toHaveLength(1);
  });

  it('an anonymised lead shows no personal data and no buttons', () => {
    const card = renderCard(
      { ...lead, name: null, telegram: null, phone: null, comment: null, anonymised_at: 1 },
      [{ created_at: 5, changes: { name: 'X' } }],
      options,
    );
    expect(card.plain).toContain('🗑 Личные данные удалены');
    expect(card.plain).not.toContain('Имя: X');
    expect(card.keyboard.inline_keyboard).toEqual([]);
  });

  it('a late lead: a line under the time says it came through the fallback, or late, in LEADS_TIMEZONE', () => {
    const sentAt = lead.created_at + 1500;
    const viaFallback = renderCard(
      { ...lead, late_route: 'fallback', fallback_sent_at: sentAt, received_at: lead.created_at + 3600_000 },
      [],
      options,
    );
    expect(viaFallback.plain.split('\n').slice(0, 3)).toEqual([
      '🆕 Заявка #42',
      '🕒 29.11.2026 12:00',
      '📨 Пришла через резервный канал в 12:00',
    ]);
    expect(viaFallback.html.split('\n')[2]).toBe('📨 Пришла через резервный канал в 12:00');
    const lost = renderCard({ ...lead, late_route: 'lost', received_at: lead.created_at + 2 * 3600_000 + 15 * 60_000 }, [], options);
    expect(lost.plain.split('\n')[2]).toBe('⏳ Пришла с опозданием (сервер заявок не отвечал): в базе с 14:15');
    // On another local day the date is named too.
    const nextDay = renderCard({ ...lead, late_route: 'lost', received_at: lead.created_at + 24 * 3600_000 }, [], options);
    expect(nextDay.plain.split('\n')[2]).toBe('⏳ Пришла с опозданием (сервер заявок не отвечал): в базе с 30.11.2026 12:00');
    // A lead that came in time has no such line.
    expect(renderCard({ ...lead, received_at: lead.created_at }, [], options).plain.split('\n')[2]).toBe('Имя: Анна');
    expect(parseHtml(viaFallback.html)).toMatchObject({ ok: true, text: viaFallback.plain });
  });

  it('the longest possible card is valid Telegram HTML within 4096 characters', () => {
    const worst = '&<>"'.repeat(300);
    const longLead = { ...lead, name: 'Я'.repeat(80), comment: worst, date: 'д'.repeat(60), guests: 'г'.repeat(40) };
    const repeats = Array.from({ length: 5 }, (_, i) => ({
      created_at: lead.created_at + i,
      changes: {
        name: 'Ж'.repeat(80),
        comment: worst,
        date: 'д'.repeat(60),
        guests: 'г'.repeat(40),
        phone: '+123456789012345',
        telegram: '@' + 'a'.repeat(32),
      },
    }));
    const card = renderCard(longLead, repeats, options);
    const parsed = parseHtml(card.html);
    expect(parsed.ok).toBe(true);
    if (parsed.ok) {
      expect(parsed.text.length).toBeLessThanOrEqual(4096);
      expect(parsed.text).toBe(card.plain);
    }
  });
});

describe('renderMinimalCard', () => {
  it.each(LEAD_STATUSES)('status %s: number, status line, the note, the same status buttons, no personal data', (status) => {
    const full = renderCard({ ...lead, status }, [], options);
    const card = renderMinimalCard({ ...lead, status }, options);
    expect(card.plain.split('\n')).toEqual(['🆕 Заявка #42', `Статус: ${ru.statuses[status]}`, `⚠️ ${MINIMAL_CARD_NOTE}`]);
    expect(MINIMAL_CARD_NOTE).toBe('текст слишком длинный — см. trace');
    expect(card.keyboard.inline_keyboard).toEqual([full.keyboard.inline_keyboard[0]]);
    for (const pii of [lead.name, lead.telegram, lead.phone, lead.comment, lead.date, lead.guests] as string[]) {
      expect(card.html).not.toContain(pii);
      expect(JSON.stringify(card.keyboard)).not.toContain(pii);
    }
    const parsed = parseHtml(card.html);
    expect(parsed.ok && parsed.text).toBe(card.plain);
  });
});

describe('shorten', () => {
  it('never returns more than max units; 0 gives nothing, 1 gives the ellipsis', () => {
    expect(shorten('Свадьба', 0)).toBe('');
    expect(shorten('Свадьба', 1)).toBe('…');
    expect(shorten('Свадьба', 4)).toBe('Сва…');
    expect(shorten('Свадьба', 7)).toBe('Свадьба');
  });
  it('cuts between characters, never inside an emoji or a letter with its marks', () => {
    expect(shorten('😀😀😀', 4)).toBe('😀…');
    expect(shorten('👨‍👩‍👧👨‍👩‍👧', 10)).toBe('👨‍👩‍👧…');
    expect(shorten('Зa' + '\u0301'.repeat(7000), 100)).toBe('З…');
  });
});

describe('telegramTextLength', () => {
  it('counts UTF-16 units of the text after entity parsing', () => {
    expect(telegramTextLength('<b>a&amp;b</b> &lt;&gt;&quot;')).toBe(7);
    expect(telegramTextLength('😀&#128512;&#x1F600;')).toBe(6);
    expect(telegramTextLength('a & b')).toBe(5);
    const card = renderCard(lead, [{ created_at: lead.created_at + 1, changes: { comment: '<&>"' } }], options);
    const parsed = parseHtml(card.html);
    expect(parsed.ok && parsed.text.length).toBe(telegramTextLength(card.html));
  });
});

/** Bold is the only markup; tags are balanced and not nested. */
function expectOnlyBold(html: string): void {
  const tags = html.match(/<[^>]*>/g) ?? [];
  tags.forEach((tag, i) => expect(tag).toBe(i % 2 === 0 ? '<b>' : '</b>'));
}

describe('the card can not be faked by a visitor', () => {
  it('the status line and repeat headers are bold in HTML', () => {
    const card = renderCard(lead, [{ created_at: lead.created_at + 1, changes: { guests: '40' } }], options);
    expect(card.html).toContain('<b>Статус: 🆕 Новая</b>');
    const changed = renderCard({ ...lead, status: 'won', status_changed_by: 'Мария', status_changed_at: lead.created_at }, [], options);
    expect(changed.html).toContain('<b>Статус: ✅ Заказ — Мария, 29.11.2026 12:00</b>');
    expect(card.html).toMatch(/<b>🔁 Повторное обращение: [\d.: ]+<\/b>/);
    expectOnlyBold(card.html);
  });
  it('every line of a multi-line value starts with the bar, so typed lines never pass for the card own lines', () => {
    const comment = 'Привет\nСтатус: ✅ Заказ\n\n🔁 Повторное обращение: 29.11.2026 12:00';
    // The name bypasses the normaliser here, as if stored by an older version: the renderer does not trust it.
    const name = 'Анна\u2028Статус: ❌ Отказ';
    const card = renderCard({ ...lead, comment, name }, [{ created_at: lead.created_at + 1, changes: { comment } }], options);
    const lines = card.plain.split('\n');
    expect(lines.filter((l) => l.startsWith('Статус:'))).toEqual(['Статус: 🆕 Новая']);
    expect(lines.filter((l) => l.startsWith('🔁'))).toHaveLength(1);
    expect(card.plain).toContain(
      `Комментарий:\n${QUOTE_BAR} Привет\n${QUOTE_BAR} Статус: ✅ Заказ\n${QUOTE_BAR}\n${QUOTE_BAR} 🔁 Повторное`,
    );
    expect(card.plain).toContain(`Имя:\n${QUOTE_BAR} Анна\n${QUOTE_BAR} Статус: ❌ Отказ`);
    const parsed = parseHtml(card.html);
    expect(parsed.ok && parsed.text).toBe(card.plain);
  });
  it('a repeat that brings a different phone (so only the username matched) carries a bold warning, with PII on and off', () => {
    const repeats = [{ created_at: lead.created_at + 1, changes: { phone: '+70000000000', comment: 'звоните сюда' } }];
    for (const pii of [true, false]) {
      const card = renderCard(lead, repeats, { ...options, pii });
      expect(card.html).toContain(`<b>${REPEAT_BY_USERNAME_WARNING}</b>`);
      expect(card.html).not.toContain(REPEAT_BY_PHONE_WARNING);
    }
  });
  it('a repeat that brings a different username (so only the phone matched) carries the other warning', () => {
    const card = renderCard(lead, [{ created_at: lead.created_at + 1, changes: { telegram: '@other_one' } }], options);
    expect(card.html).toContain(`<b>${REPEAT_BY_PHONE_WARNING}</b>`);
    expect(card.html).not.toContain(REPEAT_BY_USERNAME_WARNING);
  });
  it('a repeat with the same contacts carries no warning', () => {
    const card = renderCard(lead, [{ created_at: lead.created_at + 1, changes: { guests: '40', name: 'Аня' } }], options);
    expect(card.plain).not.toContain('⚠️');
  });
  it('the write button is only offered for a well-formed username', () => {
    const buttonOf = (telegram: string) => renderCard({ ...lead, telegram }, [], options).keyboard.inline_keyboard[1];
    expect(buttonOf('@anna_k')).toEqual([{ text: '✈️ Написать @anna_k', url: 'https://t.me/anna_k' }]);
    expect(buttonOf('@anna k/../x')).toBeUndefined();
  });
});

describe('the card always fits Telegram (4096 UTF-16 units after entity parsing)', () => {
  const emojiHeavy = (units: number) => '👨‍👩‍👧'.repeat(Math.floor(units / 8)).padEnd(units, 'ж');
  const maxLead: CardLead = {
    ...lead,
    name: emojiHeavy(FIELD_UNITS_MAX.name),
    telegram: '@' + 'a'.repeat(32),
    phone: '+123456789012345',
    date: emojiHeavy(FIELD_UNITS_MAX.date),
    guests: emojiHeavy(FIELD_UNITS_MAX.guests),
    comment: '&<>"'.repeat(FIELD_UNITS_MAX.comment / 4),
    status: 'in_progress',
    status_changed_by: 'Мария Менеджер',
    status_changed_at: lead.created_at + 5,
  };
  const emojiRepeat = (i: number): CardRepeat => ({
    created_at: lead.created_at + 1000 * (i + 1),
    changes: {
      name: emojiHeavy(FIELD_UNITS_MAX.name),
      telegram: '@' + 'b'.repeat(32),
      phone: '+' + String(i).repeat(15),
      date: emojiHeavy(FIELD_UNITS_MAX.date),
      guests: emojiHeavy(FIELD_UNITS_MAX.guests),
      comment: `${i}\n` + '🧑🏽‍🚀'.repeat(FIELD_UNITS_MAX.comment / 7),
    },
  });

  it('red team: every field at its bound and three emoji-heavy repeats: all three repeats shown, newest first, within 4096', () => {
    const card = renderCard(maxLead, [0, 1, 2].map(emojiRepeat), options);
    expect(telegramTextLength(card.html)).toBeLessThanOrEqual(TELEGRAM_TEXT_MAX);
    expect(card.plain.length).toBeLessThanOrEqual(TELEGRAM_TEXT_MAX);
    const parsed = parseHtml(card.html);
    expect(parsed.ok && parsed.text).toBe(card.plain);
    expect(card.plain.match(/🔁 Повторное обращение/g)).toHaveLength(3);
    expect(card.plain.indexOf(`${QUOTE_BAR} 2`)).toBeLessThan(card.plain.indexOf(`${QUOTE_BAR} 1`));
    expect(card.plain).toContain('Статус: 🛠 В работе — Мария Менеджер');
    expect(card.plain).toContain('…');
    expectOnlyBold(card.html);
  });

  it('red team: a raw name of "Зa" + 7000 combining marks (as if it bypassed the field rules) fits', () => {
    const name = 'Зa' + '\u0301'.repeat(7000);
    const card = renderCard({ ...lead, name }, [{ created_at: lead.created_at + 1, changes: { name } }], options);
    expect(telegramTextLength(card.html)).toBeLessThanOrEqual(TELEGRAM_TEXT_MAX);
    expect(card.plain).toContain('Имя: З…');
    expect(card.plain).toContain('Гостей: 30');
  });

  it('short values stay whole while the longest one is cut', () => {
    const card = renderCard({ ...lead, comment: 'к'.repeat(10000) }, [], options);
    expect(card.plain.length).toBe(TELEGRAM_TEXT_MAX);
    expect(card.plain).toContain('Имя: Анна\nTelegram: @anna_k\nТелефон: +7 999 123 45 67\nДата: 14 февраля\nГостей: 30\n');
    expect(card.plain).toMatch(/Комментарий: к+…\n/);
  });

  it('when the fixed text alone is too long, older repeats give way, then the minimal card', () => {
    const repeats = [0, 1, 2].map(emojiRepeat);
    const full = renderCard(maxLead, repeats, options, 4096);
    expect(full.plain.match(/🔁/g)).toHaveLength(3);
    const tight = renderCard(maxLead, repeats, options, 700);
    expect(tight.plain.length).toBeLessThanOrEqual(700);
    expect(tight.plain.match(/🔁/g)!.length).toBeLessThan(3);
    expect(tight.plain).toContain(`${QUOTE_BAR} 2`);
    expect(tight.plain).toMatch(/…и ещё повторных: [12]$/);
    expect(renderCard(maxLead, repeats, options, 40)).toEqual(renderMinimalCard(maxLead, options));
  });

  it('the fullest layout has its fixed text within a fifth of the limit, so values always have room', () => {
    const fullest = { ...maxLead, status_changed_by: 'M'.repeat(500) };
    const repeats = [0, 1, 2].map(emojiRepeat).map((r) => ({ ...r, changes: { ...r.changes, comment: 'к\n'.repeat(500) } }));
    const card = renderCard(fullest, repeats, options, Math.floor(TELEGRAM_TEXT_MAX / 5));
    expect(card.plain.match(/🔁/g)).toHaveLength(3);
  });
});

describe('the captcha line', () => {
  it('an unchecked captcha: a warning line under the time, above the source', () => {
    const card = renderCard({ ...lead, captcha: 'unchecked', source_landing: 'wedding' }, [], options);
    expect(card.plain.split('\n').slice(0, 4)).toEqual(['🆕 Заявка #42', '🕒 29.11.2026 12:00', ru.card.captchaUnchecked, '📣 wedding']);
    expect(ru.card.captchaUnchecked).toBe('⚠️ Капча не проверена: сервис проверки был недоступен');
    expect(parseHtml(card.html).ok).toBe(true);
  });
  it('a passed captcha, or none at all: no line, the card as before', () => {
    expect(renderCard({ ...lead, captcha: 'passed' }, [], options).plain).toBe(renderCard(lead, [], options).plain);
    expect(renderCard({ ...lead, captcha: null }, [], options).plain).not.toContain('Капча');
  });
  it('the line stays with PII off and on an anonymised card: it is not personal', () => {
    expect(renderCard({ ...lead, captcha: 'unchecked' }, [], { ...options, pii: false }).plain).toContain(ru.card.captchaUnchecked);
    expect(renderCard({ ...lead, captcha: 'unchecked', anonymised_at: 1 }, [], options).plain).toContain(ru.card.captchaUnchecked);
  });
});

describe('the source line', () => {
  const sourced: CardLead = { ...lead, source_landing: 'wedding', utm_source: 'yandex', utm_medium: 'cpc', utm_campaign: 'summer' };
  it('one line under the time: the landing, then source / medium / campaign', () => {
    const card = renderCard(sourced, [], options);
    expect(card.plain.split('\n').slice(0, 4)).toEqual([
      '🆕 Заявка #42',
      '🕒 29.11.2026 12:00',
      '📣 wedding · yandex / cpc / summer',
      'Имя: Анна',
    ]);
  });
  it('missing parts are left out; a lead with no source has no line', () => {
    expect(renderCard({ ...lead, utm_source: 'vk', utm_campaign: 'spring' }, [], options).plain).toContain('\n📣 vk / spring\n');
    expect(renderCard({ ...lead, source_landing: 'corporate' }, [], options).plain).toContain('\n📣 corporate\n');
    expect(renderCard(lead, [], options).plain).not.toContain('📣');
    expect(renderCard({ ...lead, source_landing: null, utm_source: null }, [], options).plain).toBe(renderCard(lead, [], options).plain);
  });
  it('the UTM values are personal: with PII off and on an anonymised card only the landing is left', () => {
    expect(renderCard(sourced, [], { ...options, pii: false }).plain).toContain('\n📣 wedding\n');
    expect(renderCard({ ...sourced, anonymised_at: 1 }, [], options).plain).toContain('\n📣 wedding\n');
    expect(renderCard({ ...sourced, source_landing: null }, [], { ...options, pii: false }).plain).not.toContain('📣');
  });
  it('the values are escaped in HTML and stay on one line', () => {
    const card = renderCard({ ...lead, utm_campaign: 'a<b>&\nc' }, [], options);
    expect(card.html).toContain('📣 a&lt;b&gt;&amp; c');
    expect(parseHtml(card.html).ok).toBe(true);
  });
});
