import { cardUrl } from './card-link';

describe('cardUrl', () => {
  it('links a supergroup card by the chat id without -100, in its topic when it has one', () => {
    expect(cardUrl('-1001234567890', 45)).toBe('https://t.me/c/1234567890/45');
    expect(cardUrl('-1001234567890', 45, 12)).toBe('https://t.me/c/1234567890/12/45');
  });

  it('links a public chat by its name; a basic group or a lead without a card has no link', () => {
    expect(cardUrl('@stickers_leads', 7)).toBe('https://t.me/stickers_leads/7');
    expect(cardUrl('-123456', 7)).toBeNull();
    expect(cardUrl(null, null)).toBeNull();
    expect(cardUrl('-1001234567890', null)).toBeNull();
  });
});
