import { randomBytes } from 'node:crypto';
import type { Clock } from '../clock/clock';
import type { BotIdentity, RawUpdate, TelegramGateway } from '../telegram/telegram.gateway';
import type { TelegramFailure } from '../telegram/telegram-result';
import { botRights } from './bot-rights';
import { isForTheServer, UpdateFeed, type Waited } from './update-feed';

/** How setup talks to the operator: lines out, and (at a terminal) answers in. */
export interface SetupIo {
  say(line: string): void;
  /** Someone can answer (a terminal): else every question takes its safe answer and nothing waits for Enter. */
  readonly interactive: boolean;
  /** A question answered with one line; null when nobody can answer: the caller takes the safe way. */
  ask(question: string): Promise<string | null>;
  /** Resolves when the operator presses Enter (to skip a step); never without a terminal. Stops listening at `signal`. */
  enter(signal: AbortSignal): Promise<void>;
}

export interface SetupOptions {
  /** The longest each wait lasts (the bot added, a topic message, the press), in seconds. */
  timeoutSec: number;
  /** Ask for the admin chat as well. */
  admin: boolean;
  /** Delete a webhook that is set without asking. */
  deleteWebhook: boolean;
  /** Take (and so drop) presses and commands that wait for the server, without asking. */
  dropPending: boolean;
  /** Ctrl-C: setup stops waiting, confirms what it read and ends. */
  signal?: AbortSignal;
  /** The leads chat the operator named (--chat): a sighting of another group is ignored. */
  chat: string | null;
  /**
   * The operator's Telegram user id (--from): only a group the bot was added to by them (or written in by them) is
   * taken, for the leads chat and the admin chat.
   */
  from: number | null;
}

/** A chat (and topic) the operator pointed setup at. */
export interface ChatChoice {
  chatId: string;
  title: string;
  forum: boolean;
  /** The forum topic; null: the chat itself (a forum's General topic). */
  threadId: number | null;
}

export interface SetupResult {
  /** 0: every check passed; 1: a problem (said in its line); 130: stopped by the operator. */
  code: number;
  leads: ChatChoice | null;
  admin: ChatChoice | null;
}

/** What an update says about a chat: the bot was added to it, or someone wrote in it (and in which topic). */
interface ChatSighting {
  chat: { id: number; type: string; title?: string; is_forum?: boolean };
  /** The topic of a message (null: none, or General); undefined: not known (the bot was just added). */
  threadId: number | null | undefined;
  how: string;
  /** Who added the bot, or wrote the message; null when the update does not say. */
  by: { id: number; name: string } | null;
}

type Chat = ChatSighting['chat'];

const IN_CHAT = ['creator', 'administrator', 'member', 'restricted'];

interface TelegramUser {
  id: number;
  first_name?: string;
  last_name?: string;
  username?: string;
}

function userName(user: Omit<TelegramUser, 'id'> | undefined): string {
  const full = [user?.first_name, user?.last_name].filter(Boolean).join(' ');
  return full || (user?.username ? `@${user.username}` : 'someone');
}

/** The chat an update shows, if it is a group the bot is in; null for anything else (a private message, a removal). */
function sighting(update: RawUpdate, botId: number): ChatSighting | null {
  const change = update.my_chat_member as
    { chat: Chat; from?: TelegramUser; new_chat_member: { status: string; is_member?: boolean; user?: { id: number } } } | undefined;
  if (change) {
    const member = change.new_chat_member;
    if (member.user && member.user.id !== botId) return null;
    if (!IN_CHAT.includes(member.status) || member.is_member === false) return null;
    if (change.chat.type !== 'group' && change.chat.type !== 'supergroup') return null;
    const by = person(change.from);
    return { chat: change.chat, threadId: undefined, how: `the bot was added to it by ${named(by)}`, by };
  }
  const message = update.message as
    { chat: Chat; from?: TelegramUser; message_thread_id?: number; is_topic_message?: boolean; text?: string } | undefined;
  if (!message || (message.chat.type !== 'group' && message.chat.type !== 'supergroup')) return null;
  const threadId = message.is_topic_message && message.message_thread_id ? message.message_thread_id : null;
  const by = person(message.from);
  return { chat: message.chat, threadId, how: `${named(by)} wrote in it`, by };
}

function person(user: TelegramUser | undefined): ChatSighting['by'] {
  return user ? { id: user.id, name: userName(user) } : null;
}

const named = (by: ChatSighting['by']) => (by ? `${by.name} (user id ${by.id})` : 'someone');

const describeChat = (c: ChatChoice) =>
  `«${c.title}» (${c.chatId})${c.forum ? (c.threadId ? `, topic ${c.threadId}` : ', its General topic') : ''}`;

/**
 * `npm run leads -- setup` (docs/requirements.md §16.1): from a bot token alone to the lines of `.env` — the leads
 * group and its topic, the admin chat — found from updates the operator causes (adding the bot, a message in the
 * topic), then what the bot may do there, and a test card whose button press must come back. Needs no server; reads
 * updates with its own long polling and leaves them confirmed for the server that polls next.
 */
export class SetupService {
  private problems = 0;
  private readonly nonce = randomBytes(6).toString('hex');
  private readonly feed: UpdateFeed;

  constructor(
    private readonly telegram: TelegramGateway,
    private readonly io: SetupIo,
    private readonly clock: Clock,
    private readonly options: SetupOptions,
  ) {
    this.feed = new UpdateFeed(telegram, clock, (data) => data === this.pressData);
  }

  private get pressData(): string {
    return `setup:${this.nonce}`;
  }

  private ok(text: string): void {
    this.io.say(`ok    ${text}`);
  }

  private fail(text: string): void {
    this.problems += 1;
    this.io.say(`FAIL  ${text}`);
  }

  private note(text: string): void {
    this.io.say(`note  ${text}`);
  }

  async run(): Promise<SetupResult> {
    const result: SetupResult = { code: 1, leads: null, admin: null };
    if (!this.io.interactive && this.options.chat === null && this.options.from === null) {
      // Nobody can confirm the group: the first one to show up could be a stranger's (anyone may add a bot to a group).
      this.fail(
        "without a terminal setup takes only the group you name: run it with --chat <the group's chat id> " +
          "or --from <your Telegram user id> (then the group you add the bot to is taken, and nobody else's)",
      );
      return result;
    }
    const me = await this.identify();
    if (!me) return result;
    if (!(await this.takeOverUpdates())) return result;
    try {
      result.leads = await this.chooseChat(me, null);
      if (result.leads && this.options.admin) result.admin = await this.chooseChat(me, result.leads);
      if (!result.leads) return { ...result, code: this.stopped ? 130 : 1 };
      this.printEnv(result.leads, result.admin);
      const leadsWritable = await this.checkChat(me, 'leads chat', result.leads);
      const adminWritable = result.admin ? await this.checkChat(me, 'admin chat', result.admin) : false;
      if (result.admin && adminWritable) await this.testAdminMessage(result.admin);
      if (leadsWritable) await this.testCard(result.leads);
      if (this.stopped) return { ...result, code: 130 };
      result.code = this.problems > 0 ? 1 : 0;
      this.io.say(
        this.problems > 0
          ? `setup: ${this.problems} problem${this.problems > 1 ? 's' : ''} above; fix and run it again (or npm run leads -- doctor once .env is set)`
          : 'setup: every check passed. Paste the lines above into .env, start the server, then run npm run leads -- doctor',
      );
      return result;
    } finally {
      await this.handBack();
    }
  }

  private get stopped(): boolean {
    return this.options.signal?.aborted === true;
  }

  /** getMe: the token works (one line when it does not). */
  private async identify(): Promise<BotIdentity | null> {
    const me = await this.telegram.getMe();
    if (!me.ok) {
      if (me.kind === 'refused' && /^(401|404)/.test(me.description)) {
        this.fail(
          `TELEGRAM_BOT_TOKEN: Telegram does not know this token (${me.description}): copy it again from @BotFather (/mybots → the bot → API Token)`,
        );
      } else {
        this.fail(
          `TELEGRAM_BOT_TOKEN: the token could not be checked: Telegram did not answer (${me.description}); check TELEGRAM_API_ROOT and the network`,
        );
      }
      return null;
    }
    this.ok(`TELEGRAM_BOT_TOKEN: the bot @${me.value.username ?? '?'} (id ${me.value.id})`);
    if (me.value.can_read_all_group_messages === false) {
      this.note('privacy mode is on (as BotFather sets it): in groups the bot sees commands and its buttons, all it needs');
    }
    return me.value;
  }

  /**
   * Setup reads updates with getUpdates: not while a webhook is set (Telegram refuses), and not over presses and
   * commands that wait for the server (reading past them would drop them).
   */
  private async takeOverUpdates(): Promise<boolean> {
    const hook = await this.telegram.getWebhookInfo();
    if (!hook.ok) {
      this.fail(`getWebhookInfo failed (${hook.description}): try again`);
      return false;
    }
    if (hook.value.url) {
      this.io.say(
        `a webhook is set: Telegram posts this bot's updates to ${hook.value.url} (a server in webhook mode), so setup cannot read them`,
      );
      const yes =
        this.options.deleteWebhook ||
        /^y(es)?$/i.test(
          (await this.io.ask('Delete the webhook? The server sets it again when it starts with TELEGRAM_WEBHOOK_URL. [y/N] ')) ?? '',
        );
      if (!yes) {
        this.fail(
          'a webhook is set: run setup with --delete-webhook (the server sets it again at its start), or send /stickers_chatid in the group: the running server answers it',
        );
        return false;
      }
      const deleted = await this.telegram.deleteWebhook();
      if (!deleted.ok) {
        this.fail(`deleteWebhook failed (${deleted.description})`);
        return false;
      }
      this.ok('webhook deleted: the server sets it again when it starts in webhook mode');
    }
    const pending = await this.feed.pending();
    if (!pending.ok) {
      this.pollFailed(pending.failure);
      return false;
    }
    const forServer = pending.updates.filter((u) => isForTheServer(u));
    if (forServer.length > 0) {
      this.io.say(`${forServer.length} button press(es) or command(s) wait for the server: setup would take them from it`);
      const yes = this.options.dropPending || /^y(es)?$/i.test((await this.io.ask('Drop them and go on? [y/N] ')) ?? '');
      if (!yes) {
        this.fail('updates wait for the server: start it once so that it takes them, then run setup again (or pass --drop-pending)');
        return false;
      }
      this.feed.skipBuffered();
      this.note(`${forServer.length} waiting update(s) dropped`);
    }
    return true;
  }

  private pollFailed(failure: TelegramFailure): void {
    if (/409/.test(failure.description) && /webhook/i.test(failure.description)) {
      this.fail(`a webhook was set meanwhile (${failure.description}): run setup again`);
    } else if (/409/.test(failure.description)) {
      this.fail(
        `another program reads this bot's updates (${failure.description}): stop the server (or another setup) while setup runs, or send /stickers_chatid in the group and let the running server answer`,
      );
    } else {
      this.fail(`getUpdates failed (${failure.description})`);
    }
  }

  /** Waits for one update `pick` accepts, within the bound; a line for a timeout or a failure. */
  private async wait<T>(pick: (u: RawUpdate) => T | null, skippable: boolean): Promise<Waited<T>> {
    const until = this.clock.now() + this.options.timeoutSec * 1000;
    const local = new AbortController();
    const signals = [local.signal, ...(this.options.signal ? [this.options.signal] : [])];
    if (skippable && this.io.interactive) void this.io.enter(local.signal).then(() => local.abort());
    try {
      const waited = await this.feed.next(pick, until, AbortSignal.any(signals));
      if (waited.kind === 'failed') this.pollFailed(waited.failure);
      return waited;
    } finally {
      local.abort();
    }
  }

  /**
   * The leads chat (`other` null) or the admin chat: a group the bot is added to or written in; in a forum, the topic
   * of a message there. The admin chat may be another topic of the leads group, not the leads topic itself.
   */
  private async chooseChat(me: BotIdentity, other: ChatChoice | null): Promise<ChatChoice | null> {
    const username = me.username ? `@${me.username}` : 'the bot';
    if (!other) {
      this.io.say('');
      this.io.say('1. The leads group (the cards go there).');
      this.io.say(`   Add ${username} to the group (group → Add members), or, if it is there already, send /stickers_chatid in it.`);
      this.io.say('   A group with topics: send /stickers_chatid in the topic for the cards.');
    } else {
      this.io.say('');
      this.io.say('2. The admin chat (alerts, the daily digest, /stickers_export), optional.');
      this.io.say(`   Send /stickers_chatid in it: another group (add ${username} first), or another topic of «${other.title}».`);
      if (this.io.interactive) this.io.say('   Press Enter to go on without an admin chat.');
    }
    if (other && !this.io.interactive && this.options.from === null) {
      this.note(
        'no admin chat: without a terminal setup takes an admin chat only with --from (set ADMIN_CHAT_ID later; /stickers_chatid tells it)',
      );
      return null;
    }
    this.io.say(`   Waiting up to ${this.options.timeoutSec} s…`);
    for (;;) {
      const seen = await this.wait((u) => {
        const s = sighting(u, me.id);
        if (!s) {
          const message = u.message as { chat?: { type?: string } } | undefined;
          if (message?.chat?.type === 'private')
            this.note('a private message to the bot: the chat to set up is a group, add the bot there');
          return null;
        }
        const inLeadsChat = other !== null && String(s.chat.id) === other.chatId;
        if (inLeadsChat && (s.threadId === undefined || s.threadId === other.threadId)) {
          if (s.threadId !== undefined)
            this.note(`that is the leads ${other.threadId ? 'topic' : 'chat'}: the admin chat is another chat or topic`);
          return null;
        }
        const chat = `«${s.chat.title ?? s.chat.id}» (${s.chat.id})`;
        if (!other && this.options.chat !== null && String(s.chat.id) !== this.options.chat) {
          this.note(`${chat}: ${s.how}; not the chat of --chat ${this.options.chat}: ignored`);
          return null;
        }
        if (!inLeadsChat && this.options.from !== null && s.by?.id !== this.options.from) {
          this.note(`${chat}: ${s.how}; not by --from ${this.options.from}: ignored`);
          return null;
        }
        return s;
      }, other !== null);
      if (waited(seen) === null) {
        if (other && seen.kind !== 'failed' && !this.stopped) {
          this.note('no admin chat: alerts and the digest are only logged (set ADMIN_CHAT_ID later; /stickers_chatid tells it)');
        } else if (seen.kind === 'timeout') {
          this.fail(
            `no group showed up within ${this.options.timeoutSec} s: add the bot to the group (or send /stickers_chatid there) and run setup again`,
          );
        }
        return null;
      }
      const s = waited(seen)!;
      const choice: ChatChoice = {
        chatId: String(s.chat.id),
        title: s.chat.title ?? String(s.chat.id),
        forum: s.chat.is_forum === true,
        threadId: s.threadId ?? null,
      };
      const count = await this.telegram.getChatMemberCount(choice.chatId);
      const members = count.ok ? `${count.value} member${count.value === 1 ? '' : 's'}` : `members unknown (${count.description})`;
      const found = `«${choice.title}» (${choice.chatId})${choice.threadId ? `, topic ${choice.threadId}` : ''}: ${members}; ${s.how}`;
      // A group the operator did not name (--chat, --from) is taken only when they say so: it may be a stranger's.
      const named = this.options.chat !== null || this.options.from !== null || (other !== null && choice.chatId === other.chatId);
      if (!named) {
        this.io.say(`   ${found}`);
        const what = other ? 'the admin chat' : 'the leads group';
        const answer = await this.io.ask(`Take it as ${what}? [y/N] `);
        if (!/^y(es)?$/i.test(answer?.trim() ?? '')) {
          this.note(`«${choice.title}» not taken: waiting for another group (add the bot to yours, or send /stickers_chatid in it)`);
          continue;
        }
      }
      this.ok(found);
      if (choice.forum && s.threadId === undefined) choice.threadId = await this.chooseTopic(choice);
      return choice;
    }
  }

  /** A forum: the topic is the one a message is written in (General: none). */
  private async chooseTopic(choice: ChatChoice): Promise<number | null> {
    this.io.say(
      `   «${choice.title}» has topics: send /stickers_chatid in the topic to use (in General for none). Waiting up to ${this.options.timeoutSec} s…`,
    );
    const seen = await this.wait((u) => {
      const message = u.message as { chat?: { id: number }; message_thread_id?: number; is_topic_message?: boolean } | undefined;
      if (!message || String(message.chat?.id) !== choice.chatId) return null;
      return { threadId: message.is_topic_message && message.message_thread_id ? message.message_thread_id : null };
    }, false);
    const topic = waited(seen);
    if (!topic) {
      if (seen.kind === 'timeout') this.note(`no message in a topic within ${this.options.timeoutSec} s: the chat's General topic it is`);
      return null;
    }
    this.ok(topic.threadId ? `topic ${topic.threadId} of «${choice.title}»` : `the General topic of «${choice.title}»`);
    return topic.threadId;
  }

  private printEnv(leads: ChatChoice, admin: ChatChoice | null): void {
    this.io.say('');
    this.io.say('Paste into .env (beside TELEGRAM_BOT_TOKEN):');
    this.io.say(`LEADS_CHAT_ID=${leads.chatId}`);
    if (leads.threadId) this.io.say(`LEADS_THREAD_ID=${leads.threadId}`);
    if (admin) {
      this.io.say(`ADMIN_CHAT_ID=${admin.chatId}`);
      if (admin.threadId) this.io.say(`ADMIN_THREAD_ID=${admin.threadId}`);
    }
    this.io.say('');
  }

  /** getChat and getChatMember of the bot: may it post and edit there? True when it may post. */
  private async checkChat(me: BotIdentity, label: string, choice: ChatChoice): Promise<boolean> {
    const chat = await this.telegram.getChat(choice.chatId);
    if (!chat.ok) {
      this.fail(`${label} ${describeChat(choice)}: the bot cannot reach it (${chat.description}): add the bot to the chat again`);
      return false;
    }
    const member = await this.telegram.getChatMember(choice.chatId, me.id);
    if (!member.ok) {
      this.fail(`${label} ${describeChat(choice)}: the bot's rights could not be read (${member.description})`);
      return false;
    }
    const rights = botRights(chat.value, member.value);
    if (rights.problem) {
      this.fail(`${label} ${describeChat(choice)}: ${rights.problem}`);
      return false;
    }
    this.ok(`${label} ${describeChat(choice)}: the bot is ${rights.role}, may send and edit its messages`);
    if (rights.manageTopics === false) this.note(`${label}: the bot may not manage topics (not needed to post in an open topic)`);
    if (rights.manageTopics === true) this.ok(`${label}: the bot may manage topics`);
    return true;
  }

  private async testAdminMessage(admin: ChatChoice): Promise<void> {
    const sent = await this.telegram.send({
      chatId: admin.chatId,
      threadId: admin.threadId,
      text: '🧪 Stickers Leads: проверка чата админов. Сюда придут оповещения и ежедневная сводка.',
      html: false,
    });
    if (sent.ok) this.ok(`admin chat: a test message went to ${describeChat(admin)}`);
    else this.fail(`admin chat: the test message was refused (${sent.description})`);
  }

  /** A card with a button; its press must come back within the bound (docs/requirements.md §16.1). */
  private async testCard(leads: ChatChoice): Promise<void> {
    const sent = await this.telegram.send({
      chatId: leads.chatId,
      threadId: leads.threadId,
      text: '🧪 Проверочная карточка Stickers Leads\nНажмите кнопку: так setup проверит, что нажатия доходят до бота.',
      html: false,
      keyboard: { inline_keyboard: [[{ text: '✅ Проверить кнопку', callback_data: this.pressData }]] },
    });
    if (!sent.ok) {
      this.fail(`test card: Telegram refused it (${sent.description})`);
      return;
    }
    this.ok(`test card sent to ${describeChat(leads)} (message ${sent.value.message_id})`);
    this.io.say(`   Press «✅ Проверить кнопку» under it. Waiting up to ${this.options.timeoutSec} s…`);
    const seen = await this.wait((u) => {
      const query = u.callback_query as { id: string; data?: string; from?: { first_name?: string } } | undefined;
      return query?.data === this.pressData ? query : null;
    }, false);
    const press = waited(seen);
    const done = { inline_keyboard: [] };
    if (!press) {
      await this.telegram.edit(
        leads.chatId,
        sent.value.message_id,
        '🧪 Проверочная карточка Stickers Leads: кнопку не нажали. Её можно удалить.',
        false,
        done,
      );
      if (seen.kind === 'timeout') {
        this.fail(
          `buttons: no press of the test card reached the bot within ${this.options.timeoutSec} s (run setup again to repeat the check)`,
        );
      }
      return;
    }
    await this.telegram.answerCallback(press.id, '✅ Кнопка работает: нажатие дошло до бота');
    await this.telegram.edit(
      leads.chatId,
      sent.value.message_id,
      `✅ Проверочная карточка Stickers Leads: нажатие (${userName(press.from)}) дошло до бота. Её можно удалить.`,
      false,
      done,
    );
    this.ok(`buttons: the press of ${userName(press.from)} reached the bot`);
  }

  /** Confirms what was read, so the server's first poll starts after it; says what was taken from the server. */
  private async handBack(): Promise<void> {
    const confirmed = await this.feed.confirm();
    if (!confirmed.ok)
      this.note(`the updates setup read could not be confirmed (${confirmed.failure.description}): the server may see them once`);
    const taken = this.feed.takenFromServer.length;
    if (taken > 0) this.note(`${taken} button press(es) or command(s) for the server came while setup waited: press or send them again`);
    if (this.stopped) this.io.say('setup stopped');
  }
}

function waited<T>(w: Waited<T>): T | null {
  return w.kind === 'found' ? w.value : null;
}
