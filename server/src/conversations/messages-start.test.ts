import { loadServerConfig } from '../config/config';
import { Clock } from '../clock/clock';
import { en } from '../i18n/en';
import { ru } from '../i18n/ru';
import { MessagesService } from './messages.service';

const FROM = { id: 7001, username: 'anna_k', first_name: 'Анна', last_name: null };

/** The decisions around the binding that need no database: where `/start` is answered, and with what. */
describe('MessagesService.start', () => {
  const bind = jest.fn().mockResolvedValue({ kind: 'bound', leadId: 42 });
  const messages = {
    activeLeadsOf: () => Promise.resolve([]),
    latestLeadOf: () => Promise.resolve(null),
    unblocked: () => Promise.resolve(),
    // `/start` after `/stop` binds again what it stopped: nothing stopped here.
    resume: () => Promise.resolve([]),
  };
  const fake = {} as never;
  const service = (t = ru) =>
    new MessagesService(loadServerConfig({}), messages as never, fake, fake, new Clock(), fake, t, fake, { bind } as never);
  beforeEach(() => bind.mockClear());

  it('outside a private chat: no answer, nothing bound', async () => {
    for (const chatType of ['group', 'supergroup', 'channel', undefined]) {
      expect(await service().start(chatType, 'AAAA', FROM)).toBeNull();
    }
    expect(bind).not.toHaveBeenCalled();
  });

  it('without a payload: the greeting; with one Telegram would never send: the polite answer; neither is looked up', async () => {
    expect(await service().start('private', '', FROM)).toEqual({ text: ru.conversation.hello });
    expect(await service().start('private', 'a b', FROM)).toEqual({ text: ru.conversation.invalid });
    expect(await service().start('private', 'x'.repeat(65), FROM)).toEqual({ text: ru.conversation.invalid });
    expect(bind).not.toHaveBeenCalled();
  });

  it("a bound payload: the lead's number in the server's language", async () => {
    expect(await service(en).start('private', 'Zx3k_q9-R2', FROM)).toEqual({ text: en.conversation.bound(42) });
    expect(bind).toHaveBeenCalledWith(expect.stringMatching(/^[0-9a-f]{64}$/), FROM, expect.any(Number), expect.any(String));
  });
});
