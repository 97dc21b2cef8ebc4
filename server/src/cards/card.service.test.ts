import { loadServerConfig } from '../config/config';
import type { Lead } from '../domain/lead';
import { ru } from '../i18n/ru';
import type { TelegramAccount } from '../domain/telegram-account';
import type { LeadMessagesRepository } from '../conversations/lead-messages.repository';
import type { TelegramLinksRepository } from '../conversations/telegram-links.repository';
import { CardService } from './card.service';
import { TELEGRAM_TEXT_MAX } from '../telegram/telegram.gateway';

const lead: Lead = {
  id: 7,
  request_id: '0f8fad5b-d9cb-469f-a165-70867728950e',
  name: 'Зa' + '\u0301'.repeat(7000),
  telegram: '@anna_k',
  telegram_key: '@anna_k',
  phone: '+79991234567',
  date: null,
  guests: '30',
  comment: '😀'.repeat(3000),
  ip_hash: null,
  status: 'in_progress',
  created_at: Date.UTC(2026, 10, 29, 9, 0),
  published_at: null,
  chat_id: null,
  message_id: null,
  card_thread_id: null,
  last_error: 'Bad Request: message is too long',
  anonymised_at: null,
  card_format: null,
  status_changed_by: 'Мария',
  status_changed_at: Date.UTC(2026, 10, 29, 10, 30),
  card_dirty_at: null,
  reminded_at: null,
  updated_at: Date.UTC(2026, 10, 29, 9, 0),
  received_at: Date.UTC(2026, 10, 29, 9, 0),
  late_route: null,
  late_reason: null,
  fallback_chat_id: null,
  fallback_message_id: null,
  fallback_sent_at: null,
  fallback_state: null,
  source_landing: 'wedding',
  utm_source: 'yandex',
  utm_medium: 'cpc',
  utm_campaign: 'summer',
  utm_content: null,
  utm_term: null,
  source_referrer: null,
  captcha: null,
  consent_accepted_at: null,
  consent_policy_url: null,
};

describe('CardService', () => {
  const accounts = new Map<number, TelegramAccount>();
  const links = {
    accountsOf: (ids: number[]) => Promise.resolve(new Map(ids.filter((id) => accounts.has(id)).map((id) => [id, accounts.get(id)!]))),
  };
  const conversations = { bindingOf: () => Promise.resolve(null) } as unknown as LeadMessagesRepository;
  const cards = new CardService(
    loadServerConfig({ LEADS_TIMEZONE: 'UTC', LEADS_CARD_PII: '1' }),
    ru,
    links as unknown as TelegramLinksRepository,
    conversations,
  );
  const hidden = new CardService(
    loadServerConfig({ LEADS_TIMEZONE: 'UTC', LEADS_CARD_PII: '0' }),
    ru,
    links as unknown as TelegramLinksRepository,
    conversations,
  );
  const MINIMAL_CARD_NOTE = ru.card.minimalNote;

  it('minimalCardFor: number, status in LEADS_TIMEZONE, the note and the status buttons, nothing personal', () => {
    const card = cards.minimalCardFor(lead);
    expect(card.plain).toBe(`🆕 Заявка #7\nСтатус: 🛠 В работе — Мария, 29.11.2026 10:30\n⚠️ ${MINIMAL_CARD_NOTE}`);
    expect(card.html).toBe(`<b>🆕 Заявка #7</b>\n<b>Статус: 🛠 В работе — Мария, 29.11.2026 10:30</b>\n⚠️ ${MINIMAL_CARD_NOTE}`);
    expect(card.keyboard).toEqual({
      inline_keyboard: [
        [
          { text: 'Заказ', callback_data: 'lead:7:in_progress:won' },
          { text: 'Отказ', callback_data: 'lead:7:in_progress:lost' },
          { text: 'Спам', callback_data: 'lead:7:in_progress:spam' },
        ],
      ],
    });
  });

  it('cardFor: the full card of a lead with a huge name and comment stays within the limit', async () => {
    const card = await cards.cardFor(lead, [{ created_at: lead.created_at + 1, changes: JSON.stringify({ phone: '+70000000000' }) }]);
    expect(card.plain.length).toBeLessThanOrEqual(TELEGRAM_TEXT_MAX);
    expect(card.plain).toContain('Имя: З…');
    expect(card.plain).toContain('⚠️ другой телефон');
    expect(card.keyboard.inline_keyboard[0]).toEqual(cards.minimalCardFor(lead).keyboard.inline_keyboard[0]);
  });

  it('cardFor: the Telegram account the visitor bound, with a warning when it is not the typed username; hidden with LEADS_CARD_PII=0', async () => {
    const small = { ...lead, id: 8, name: 'Анна', comment: null, telegram: '@Anna_K' };
    expect((await cards.cardFor(small, [])).plain).not.toContain('Telegram подтверждён');
    accounts.set(8, { id: 501, username: 'anna_k', first_name: 'Анна', last_name: null });
    const same = (await cards.cardFor(small, [])).plain;
    expect(same).toContain('✅ Telegram подтверждён: @anna_k\n');
    expect(same).not.toContain('не совпадает');
    accounts.set(8, { id: 502, username: 'other_one', first_name: 'Олег', last_name: null });
    expect((await cards.cardFor(small, [])).plain).toContain(
      '✅ Telegram подтверждён: @other_one ⚠️ не совпадает с указанным в заявке (@Anna_K)',
    );
    const secret = (await hidden.cardFor(small, [])).plain;
    expect(secret).toContain('✅ Telegram подтверждён\n');
    expect(secret).not.toContain('other_one');
    expect((await cards.cardFor({ ...small, anonymised_at: small.created_at + 1, telegram: null, name: null }, [])).plain).not.toContain(
      'Telegram подтверждён',
    );
  });
});
