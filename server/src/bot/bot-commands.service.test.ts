// Fast tier: each refusal the service decides on, in the words the users have always read.
import { ru } from '../i18n/ru';
import { refusalText, type CommandRefusal } from './bot-commands.service';

describe('refusalText', () => {
  it('words each refusal, the guarded ones after the command refused', () => {
    const cases: [CommandRefusal, string][] = [
      [{ kind: 'refused', reason: 'wrong_chat' }, 'Команды работают только в группе заявок и в чате админов.'],
      [{ kind: 'refused', reason: 'not_admin_chat' }, 'Выгрузка приходит только в чат админов.'],
      [{ kind: 'refused', reason: 'not_manager', action: 'forget' }, 'Обезличивать заявки могут только менеджеры.'],
      [{ kind: 'refused', reason: 'not_manager', action: 'export' }, 'Выгружать заявки могут только менеджеры.'],
      [{ kind: 'refused', reason: 'not_admin', action: 'forget' }, 'Обезличивать заявки могут только администраторы группы заявок.'],
      [{ kind: 'refused', reason: 'not_admin', action: 'export' }, 'Выгружать заявки могут только администраторы группы заявок.'],
      [
        { kind: 'refused', reason: 'admin_unknown', action: 'forget' },
        'Не удалось проверить в Telegram, администратор ли вы группы заявок. Попробуйте позже.',
      ],
      [
        { kind: 'refused', reason: 'admin_unknown', action: 'export' },
        'Не удалось проверить в Telegram, администратор ли вы группы заявок. Попробуйте позже.',
      ],
      [
        { kind: 'refused', reason: 'bad_arguments', action: 'forget' },
        'Укажите, кого обезличить: номер заявки (/stickers_forget 42), телефон (/stickers_forget +7 916 555-12-34) или ник (/stickers_forget @anna_k).',
      ],
      [{ kind: 'refused', reason: 'bad_arguments', action: 'export' }, 'Укажите число дней от 1 до 365: /stickers_export 30'],
      [
        { kind: 'refused', reason: 'private_chat' },
        'Это личный чат с ботом. Добавьте бота в группу заявок и отправьте /stickers_chatid там (в нужной теме).',
      ],
    ];
    for (const [refusal, text] of cases) expect(refusalText(refusal, ru)).toBe(text);
  });
});
