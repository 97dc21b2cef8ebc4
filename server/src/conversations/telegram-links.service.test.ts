import { loadServerConfig } from '../config/config';
import { Clock } from '../clock/clock';
import { en } from '../i18n/en';
import { ru } from '../i18n/ru';
import type { TelegramGateway } from '../telegram/telegram.gateway';
import { TelegramLinksService } from './telegram-links.service';
import type { TelegramLinksRepository } from './telegram-links.repository';

const FROM = { id: 7001, username: 'anna_k', first_name: 'Анна', last_name: null };

/** The decisions around the binding that need no database: where `/start` is answered, and with what. */
describe('TelegramLinksService.start', () => {
  const bind = jest.fn().mockResolvedValue({ kind: 'bound', leadId: 42 });
  const service = (t = ru) =>
    new TelegramLinksService(loadServerConfig({}), {} as TelegramGateway, { bind } as unknown as TelegramLinksRepository, new Clock(), t);
  beforeEach(() => bind.mockClear());

  it('outside a private chat: no answer, nothing bound', async () => {
    for (const chatType of ['group', 'supergroup', 'channel', undefined]) {
      expect(await service().start({ chatType, payload: 'AAAA', from: FROM })).toBeNull();
    }
    expect(bind).not.toHaveBeenCalled();
  });

  it('without a payload: the greeting; with one Telegram would never send: the polite answer; neither is looked up', async () => {
    expect(await service().start({ chatType: 'private', payload: '', from: FROM })).toBe(ru.conversation.hello);
    expect(await service().start({ chatType: 'private', payload: 'a b', from: FROM })).toBe(ru.conversation.invalid);
    expect(await service().start({ chatType: 'private', payload: 'x'.repeat(65), from: FROM })).toBe(ru.conversation.invalid);
    expect(bind).not.toHaveBeenCalled();
  });

  it("a bound payload: the lead's number in the server's language", async () => {
    expect(await service(en).start({ chatType: 'private', payload: 'Zx3k_q9-R2', from: FROM })).toBe(en.conversation.bound(42));
    expect(bind).toHaveBeenCalledWith(expect.stringMatching(/^[0-9a-f]{64}$/), FROM, expect.any(Number), expect.any(String));
  });
});
