import { cardUrl } from './card-link';

const T = 'https://t.me';

describe('cardUrl', () => {
  it('links a supergroup card by the chat id without -100, in its topic when it has one', () => {
    expect(cardUrl(T, '-1001234567890', 45)).toBe('https://t.me/c/1234567890/45');
    expect(cardUrl(T, '-1001234567890', 45, 12)).toBe('https://t.me/c/1234567890/12/45');
  });

  it('links a public chat by its name; a basic group or a lead without a card has no link', () => {
    expect(cardUrl(T, '@stickers_leads', 7)).toBe('https://t.me/stickers_leads/7');
    expect(cardUrl(T, '-123456', 7)).toBeNull();
    expect(cardUrl(T, null, null)).toBeNull();
    expect(cardUrl(T, '-1001234567890', null)).toBeNull();
  });

  it("under another root (the sandbox's stand-in for t.me in development)", () => {
    expect(cardUrl('http://127.0.0.1:3002/sandbox/t.me', '-1001234567890', 45)).toBe('http://127.0.0.1:3002/sandbox/t.me/c/1234567890/45');
  });
});
