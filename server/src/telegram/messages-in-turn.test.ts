import type { BotContext } from './telegram.gateway';
import { messagesInTurn } from './messages-in-turn';

const message = (chatId: number, text: string) => ({ chat: { id: chatId }, message: { text } }) as unknown as BotContext;
const press = (chatId: number) => ({ chat: { id: chatId }, callbackQuery: { data: 'x' } }) as unknown as BotContext;

describe('messagesInTurn: a chat’s messages one after another', () => {
  it('a second message of a chat waits for the first; another chat and a press do not', async () => {
    const inTurn = messagesInTurn();
    const steps: string[] = [];
    const step = (name: string) => () => {
      steps.push(name);
      return Promise.resolve();
    };
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const first = inTurn(message(1, 'раз'), async () => {
      steps.push('start раз');
      await held;
      steps.push('end раз');
    });
    const second = inTurn(message(1, 'два'), step('start два'));
    // While the first is held: another chat's message and a press in the same chat are handled to the end (within 5 s:
    // held behind the first, they would never end, as it waits for them).
    const bound = new Promise((_, reject) => setTimeout(() => reject(new Error('held behind the first message')), 5000).unref());
    await Promise.race([Promise.all([inTurn(message(2, 'другой чат'), step('other chat')), inTurn(press(1), step('press'))]), bound]);
    release();
    await Promise.all([first, second]);
    expect(steps).toEqual(['start раз', 'other chat', 'press', 'end раз', 'start два']);
  });

  it('a message whose handling fails frees the chat for the next', async () => {
    const inTurn = messagesInTurn();
    await expect(inTurn(message(1, 'раз'), () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    let handled = false;
    await inTurn(message(1, 'два'), () => {
      handled = true;
      return Promise.resolve();
    });
    expect(handled).toBe(true);
  });
});
