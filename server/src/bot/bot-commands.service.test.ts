// Fast tier: each refusal the service decides on, in the words the users have always read.
import { ru } from '../i18n/ru';
import { BotCommandsService } from './bot-commands.service';

const LEADS = '-100';
const ADMIN = '-200';

function service(o: { managerIds?: number[]; leadsChatId?: string | null } = {}): BotCommandsService {
  const config = { telegram: { adminChatId: ADMIN, managerIds: o.managerIds ?? null }, inbox: { url: null }, leads: { phoneRegion: 'RU' } };
  const chats = {
    leadsChats: () => Promise.resolve([LEADS]),
    leadsChatId: () => Promise.resolve(o.leadsChatId === undefined ? LEADS : o.leadsChatId),
  };
  const telegram = { getChatMember: () => Promise.resolve({ ok: false, kind: 'failed', description: 'Bad Gateway' }) };
  const fake = {} as never;
  return new BotCommandsService(config as never, ru, fake, fake, chats as never, telegram as never, fake);
}

const call = (command: 'stickers_stats' | 'stickers_forget' | 'stickers_export' | 'stickers_chatid', chatId: string, args = '') => ({
  command,
  chatId,
  threadId: null,
  userId: 7,
  args,
  chatType: chatId === '7' ? 'private' : 'supergroup',
});

describe('BotCommandsService refusals', () => {
  it('words each refusal, the guarded ones after the command refused', async () => {
    const managers = service({ managerIds: [1] });
    const admins = service({ leadsChatId: null });
    const cases: [BotCommandsService, ReturnType<typeof call>, string][] = [
      [service(), call('stickers_stats', '-300'), 'Команды работают только в группе заявок и в чате админов.'],
      [service(), call('stickers_export', LEADS), 'Выгрузка приходит только в чат админов.'],
      [managers, call('stickers_forget', LEADS, '42'), 'Обезличивать заявки могут только менеджеры.'],
      [managers, call('stickers_export', ADMIN), 'Выгружать заявки могут только менеджеры.'],
      [admins, call('stickers_forget', LEADS, '42'), 'Обезличивать заявки могут только администраторы группы заявок.'],
      [admins, call('stickers_export', ADMIN), 'Выгружать заявки могут только администраторы группы заявок.'],
      [
        service(),
        call('stickers_forget', LEADS, '42'),
        'Не удалось проверить в Telegram, администратор ли вы группы заявок. Попробуйте позже.',
      ],
      [service(), call('stickers_export', ADMIN), 'Не удалось проверить в Telegram, администратор ли вы группы заявок. Попробуйте позже.'],
      [service({ managerIds: [7] }), call('stickers_forget', LEADS, 'x'), 'Укажите номер заявки: /stickers_forget 42'],
      [service({ managerIds: [7] }), call('stickers_export', ADMIN, '0'), 'Укажите число дней от 1 до 365: /stickers_export 30'],
      [
        service(),
        call('stickers_chatid', '7'),
        'Это личный чат с ботом. Добавьте бота в группу заявок и отправьте /stickers_chatid там (в нужной теме).',
      ],
    ];
    for (const [commands, command, text] of cases) expect(await commands.run(command)).toEqual({ text });
  });
});
