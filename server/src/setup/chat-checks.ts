import type { BotIdentity, TelegramGateway } from '../telegram/telegram.gateway';
import { botRights } from './bot-rights';
import { describeChat, type ChatChoice } from './chat-chooser';
import { userName } from './chat-sighting';
import type { SetupSession } from './setup-session';
import { waited } from './update-feed';

/**
 * Setup's checks once the chats are chosen: what the bot may do in each, a test message to the admin chat, and a test
 * card in the leads chat whose button press must come back (docs/requirements.md §16.1).
 */
export class ChatChecks {
  constructor(
    private readonly session: SetupSession,
    private readonly telegram: TelegramGateway,
    /** The test card's `callback_data`, this run's own. */
    private readonly pressData: string,
  ) {}

  /** getChat and getChatMember of the bot: may it post and edit there? True when it may post. */
  async rights(me: BotIdentity, label: string, choice: ChatChoice): Promise<boolean> {
    const name = `${label} ${describeChat(choice)}`;
    const chat = await this.telegram.getChat(choice.chatId);
    const member = chat.ok ? await this.telegram.getChatMember(choice.chatId, me.id) : null;
    const rights = chat.ok && member?.ok ? botRights(chat.value, member.value) : null;
    if (!chat.ok) this.session.fail(`${name}: the bot cannot reach it (${chat.description}): add the bot to the chat again`);
    else if (member && !member.ok) this.session.fail(`${name}: the bot's rights could not be read (${member.description})`);
    else if (rights?.problem) this.session.fail(`${name}: ${rights.problem}`);
    if (!rights || rights.problem) return false;
    this.session.ok(`${name}: the bot is ${rights.role}, may send and edit its messages`);
    if (rights.manageTopics === false) this.session.note(`${label}: the bot may not manage topics (not needed to post in an open topic)`);
    if (rights.manageTopics === true) this.session.ok(`${label}: the bot may manage topics`);
    return true;
  }

  async adminMessage(admin: ChatChoice): Promise<void> {
    const sent = await this.telegram.send({
      chatId: admin.chatId,
      threadId: admin.threadId,
      text: '🧪 Stickers Leads: проверка чата админов. Сюда придут оповещения и ежедневная сводка.',
      html: false,
    });
    if (sent.ok) this.session.ok(`admin chat: a test message went to ${describeChat(admin)}`);
    else this.session.fail(`admin chat: the test message was refused (${sent.description})`);
  }

  /** A card with a button; its press must come back within the bound (docs/requirements.md §16.1). */
  async card(leads: ChatChoice): Promise<void> {
    const { io, options } = this.session;
    const sent = await this.telegram.send({
      chatId: leads.chatId,
      threadId: leads.threadId,
      text: '🧪 Проверочная карточка Stickers Leads\nНажмите кнопку: так setup проверит, что нажатия доходят до бота.',
      html: false,
      keyboard: { inline_keyboard: [[{ text: '✅ Проверить кнопку', callback_data: this.pressData }]] },
    });
    if (!sent.ok) {
      this.session.fail(`test card: Telegram refused it (${sent.description})`);
      return;
    }
    this.session.ok(`test card sent to ${describeChat(leads)} (message ${sent.value.message_id})`);
    io.say(`   Press «✅ Проверить кнопку» under it. Waiting up to ${options.timeoutSec} s…`);
    const seen = await this.session.wait((u) => {
      const query = u.callback_query as { id: string; data?: string; from?: { first_name?: string } } | undefined;
      return query?.data === this.pressData ? query : null;
    }, false);
    const press = waited(seen);
    /** The card's last text, without its button. */
    const close = (text: string) => this.telegram.edit(leads.chatId, sent.value.message_id, text, false, { inline_keyboard: [] });
    if (!press) {
      await close('🧪 Проверочная карточка Stickers Leads: кнопку не нажали. Её можно удалить.');
      if (seen.kind === 'timeout')
        this.session.fail(
          `buttons: no press of the test card reached the bot within ${options.timeoutSec} s (run setup again to repeat the check)`,
        );
      return;
    }
    await this.telegram.answerCallback(press.id, '✅ Кнопка работает: нажатие дошло до бота');
    await close(`✅ Проверочная карточка Stickers Leads: нажатие (${userName(press.from)}) дошло до бота. Её можно удалить.`);
    this.session.ok(`buttons: the press of ${userName(press.from)} reached the bot`);
  }
}
