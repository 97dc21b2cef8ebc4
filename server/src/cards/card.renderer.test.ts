import { parseHtml } from '@stickers/telegram-sandbox';
import { LEAD_STATUSES } from '../database/schema';
import { type CardLead, renderCard } from './card.renderer';
import { STATUS_BUTTONS } from './lead-statuses';

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
const options = { pii: true, timezone: 'Europe/Moscow' };

describe('renderCard (CONTRACT section 6)', () => {
  it('starts with the header and shows the time in LEADS_TIMEZONE', () => {
    const { plain } = renderCard(lead, [], options);
    expect(plain.split('\n').slice(0, 2)).toEqual(['🆕 Заявка #42', '🕒 29.11.2026 12:00']);
    expect(renderCard(lead, [], { ...options, timezone: 'UTC' }).plain).toContain('🕒 29.11.2026 09:00');
  });

  it.each(LEAD_STATUSES)('status %s: its label and exactly its buttons, callback_data within 64 bytes', (status) => {
    const card = renderCard({ ...lead, status }, [], options);
    const buttons = card.keyboard.inline_keyboard[0];
    expect(buttons.map((b) => b.text)).toEqual(STATUS_BUTTONS[status].map((b) => b.text));
    for (const b of buttons) {
      expect('callback_data' in b && Buffer.byteLength(b.callback_data)).toBeLessThanOrEqual(64);
    }
  });

  it('names who changed the status and when', () => {
    const card = renderCard({ ...lead, status: 'in_progress', status_changed_by: 'Мария', status_changed_at: Date.UTC(2026, 10, 29, 10, 30) }, [], options);
    expect(card.plain).toContain('Статус: 🛠 В работе — Мария, 29.11.2026 13:30');
  });

  it('with PII off, repeat blocks do not show changed contacts either', () => {
    const card = renderCard(lead, [{ created_at: lead.created_at + 1000, changes: { phone: '+70000000000', guests: '40' } }], { ...options, pii: false });
    expect(card.plain).not.toContain('+70000000000');
    expect(card.plain).toContain('Гостей: 40');
    expect(card.plain).toContain('Изменились контакты (скрыты)');
  });

  it('an anonymised lead shows no personal data and no buttons', () => {
    const card = renderCard({ ...lead, name: null, telegram: null, phone: null, comment: null, anonymised_at: 1 }, [{ created_at: 5, changes: { name: 'X' } }], options);
    expect(card.plain).toContain('🗑 Личные данные удалены');
    expect(card.plain).not.toContain('Имя: X');
    expect(card.keyboard.inline_keyboard).toEqual([]);
  });

  it('the longest possible card is valid Telegram HTML within 4096 characters', () => {
    const worst = '&<>"'.repeat(300);
    const longLead = { ...lead, name: 'Я'.repeat(80), comment: worst, date: 'д'.repeat(60), guests: 'г'.repeat(40) };
    const repeats = Array.from({ length: 5 }, (_, i) => ({
      created_at: lead.created_at + i,
      changes: { name: 'Ж'.repeat(80), comment: worst, date: 'д'.repeat(60), guests: 'г'.repeat(40), phone: '+123456789012345', telegram: '@' + 'a'.repeat(32) },
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
