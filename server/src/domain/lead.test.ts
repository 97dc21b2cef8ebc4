import { leadNumberOf } from './lead';

describe('leadNumberOf: a lead number as the bot, the trace and `webhooks replay` take it', () => {
  it.each([
    ['42', 42],
    ['#42', 42],
    ['042', 42],
    ['  #7 ', 7],
    ['999999999999999', 999_999_999_999_999],
  ])('%j is lead %d', (text, number) => {
    expect(leadNumberOf(text)).toBe(number);
  });

  it.each(['0', '#0', '', '#', '-1', '4.2', '42a', '# 42', '1000000000000000', '１２'])('%j is none', (text) => {
    expect(leadNumberOf(text)).toBeNull();
  });
});
