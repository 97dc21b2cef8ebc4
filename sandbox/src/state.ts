import { EventEmitter } from 'node:events';
import type { MessageEntity } from './html';

export interface SandboxUser {
  id: number;
  is_bot: boolean;
  first_name: string;
  last_name?: string;
  username?: string;
  /** The person's Telegram app language (IETF: `en`, `ru`, `pt-br`), as Telegram sends it with their updates. */
  language_code?: string;
}

/** A member's status as Telegram's ChatMember gives it. */
export type MemberStatus = 'creator' | 'administrator' | 'member' | 'restricted' | 'left' | 'kicked';
/**
 * What a member may do beyond the status: an administrator's rights (`can_manage_topics`, `can_post_messages`…, all
 * true unless set false), a restricted member's permissions (`can_send_messages`…, all false unless set true;
 * `is_member` true unless set false). Telegram's field names, as getChatMember gives them.
 */
export type MemberRights = Partial<Record<string, boolean>>;
export interface ChatMember {
  user: SandboxUser;
  status: MemberStatus;
  rights?: MemberRights;
}

/** A group's default permissions for its members (getChat's `permissions`): Telegram's field names, true unless set false. */
export type ChatPermissions = Partial<Record<string, boolean>>;

export interface SandboxChat {
  id: number;
  type: 'supergroup' | 'group' | 'private';
  title: string;
  /** Set when the group was upgraded: sends to this id answer 400 with migrate_to_chat_id. */
  migratedTo?: number;
  /** A forum supergroup: messages go into its topics, or into its General topic without a thread id. */
  is_forum?: boolean;
  /** A forum's topics (message_thread_id, name, closed or deleted). */
  topics?: SandboxTopic[];
  /** What members may do by default (`can_send_messages: false`: only administrators write). */
  permissions?: ChatPermissions;
  /** What getChatMemberCount answers (a big group); absent: the members the sandbox knows in it. */
  member_count?: number;
  /**
   * The bot's membership when the chat is added (and after a reset): an administrator when absent; `null`: the bot is
   * not in the chat (Telegram then answers "chat not found" and sends no updates from it until the bot is added).
   */
  bot?: { status: MemberStatus; rights?: MemberRights } | null;
}

/**
 * A topic of a forum supergroup. Its id is the `message_thread_id` of its messages (in Telegram the id of the
 * service message that created it, so no other message of the chat has it). A closed topic refuses new messages
 * ("TOPIC_CLOSED") but keeps its messages editable; a deleted one took its messages with it ("message thread not
 * found").
 */
export interface SandboxTopic {
  id: number;
  name: string;
  closed?: boolean;
  deleted?: boolean;
}

export interface InlineButton {
  text: string;
  callback_data?: string;
  url?: string;
  /** A Mini App (private chats only). */
  web_app?: { url: string };
}

/** A private chat's menu button, as setChatMenuButton sets it. */
export type MenuButton = { type: 'default' } | { type: 'commands' } | { type: 'web_app'; text: string; web_app: { url: string } };
export interface ReplyMarkup {
  inline_keyboard: InlineButton[][];
}

/** A PhotoSize as Telegram gives it. */
export interface PhotoSize {
  file_id: string;
  file_unique_id: string;
  width: number;
  height: number;
  file_size: number;
}

export interface SandboxMessage {
  message_id: number;
  chat_id: number;
  date: number;
  from: SandboxUser;
  text: string;
  entities: MessageEntity[];
  reply_markup?: ReplyMarkup;
  reply_to_message_id?: number;
  /** The forum topic the message is in; absent: the chat itself (a forum's General topic). */
  message_thread_id?: number;
  /** A document (sendDocument): its name and size; its bytes are in `SandboxState.documents` by file_id. */
  document?: { file_id: string; file_name: string; file_size: number; mime_type?: string };
  /** A photo (sendPhoto): its one size, the original (Telegram adds smaller ones); its bytes are in `SandboxState.photos`. */
  photo?: PhotoSize[];
  /** A voice message, a video, a sticker a user sent (the control API's `say` makes photos and documents only). */
  voice?: { file_id: string; duration: number };
  /** The bot's reactions on the message (setMessageReaction), emoji. */
  reactions?: string[];
  /** Every earlier version of the message, oldest first. */
  history: { text: string; entities: MessageEntity[]; reply_markup?: ReplyMarkup; edited_at: number }[];
  edit_date?: number;
}

export interface ApiCall {
  method: string;
  params: Record<string, unknown>;
  at: number;
  /** HTTP status of the answer, or 0 while it hangs. */
  status: number;
  description?: string;
  /** Set when the bot made the call in its answer to a webhook delivery (telegraf's webhookReply). */
  via?: 'webhook';
}

/** One getUpdates long poll, kept apart from `calls`: a polling bot makes one after another, all day. */
export interface Poll {
  at: number;
  offset: number;
  timeout: number;
  /** HTTP status of the answer, or 0 while it waits (and when the bot hung up first). */
  status: number;
  description?: string;
  /** How many updates the answer carried. */
  updates?: number;
}

/** A webhook as setWebhook sets it. Each setWebhook makes a new one, so a delivery can tell whether its webhook still stands. */
export interface Webhook {
  url: string;
  secret_token?: string;
  /** The update types delivered (the update's key: `message`, `callback_query`...); absent: every type. */
  allowed_updates?: string[];
  /** Unix time of the last failed delivery, and why, as getWebhookInfo reports them. */
  last_error_date?: number;
  last_error_message?: string;
}

/** One attempt to deliver an update to the webhook. */
export interface WebhookDelivery {
  url: string;
  update_id: number;
  at: number;
  /** The webhook's HTTP status; 0 while the request is in flight or when no answer came. */
  status: number;
  /** Why the attempt failed (getWebhookInfo's last_error_message); absent when the webhook took the update. */
  error?: string;
}

/** Attempts kept in `webhookDeliveries`: a webhook that is down is retried every second or so, for as long as it is set. */
const MAX_DELIVERIES_KEPT = 1000;

export type Update = { update_id: number; [k: string]: unknown };

/** An update's type, as allowed_updates names it: its one key besides update_id. */
const updateType = (update: Update): string | undefined => Object.keys(update).find((k) => k !== 'update_id');

export type FaultKind = 'retry_after' | 'server_error' | 'hang' | 'bad_request';
export interface Fault {
  /** A Bot API method name, or "*" for every method but getUpdates. */
  method: string;
  kind: FaultKind;
  /** Only calls for this chat (by `chat_id`); any chat when absent. */
  chat_id?: number;
  /** How many calls it answers; then it is used up. */
  remaining: number;
  retry_after?: number;
  status?: number;
  description?: string;
}

export interface CallbackAnswer {
  callback_query_id: string;
  text?: string;
  show_alert?: boolean;
  at: number;
}

export const BOT_USER: SandboxUser = {
  id: 7000000001,
  is_bot: true,
  first_name: 'Stickers Leads',
  username: 'stickers_leads_bot',
};

/** "You" on the sandbox page and the default presser in tests: the creator of every group, so every command works. */
export const DEFAULT_USER: SandboxUser = { id: 501, is_bot: false, first_name: 'Мария', last_name: 'Менеджер', username: 'maria_manager' };

export const DEFAULT_CHATS: SandboxChat[] = [
  { id: -1001000000001, type: 'supergroup', title: 'Заявки Stickers' },
  { id: -1001000000002, type: 'supergroup', title: 'Stickers — админы' },
];

function cloneChat(chat: SandboxChat): SandboxChat {
  return {
    ...chat,
    ...(chat.topics ? { topics: chat.topics.map((t) => ({ ...t })) } : {}),
    ...(chat.permissions ? { permissions: { ...chat.permissions } } : {}),
    ...(chat.bot ? { bot: { ...chat.bot, ...(chat.bot.rights ? { rights: { ...chat.bot.rights } } : {}) } } : {}),
  };
}

/**
 * Everything the sandbox knows; the HTTP layer and the page read and change it only through here. Its events: `update`
 * (an update was queued), `change` (something the page shows), `webhook` (set, changed or deleted, reset included),
 * `poll` (a getUpdates arrived, so a waiting one ends), `close` (the sandbox stops).
 */
export class SandboxState extends EventEmitter {
  chats = new Map<number, SandboxChat>();
  messages = new Map<number, SandboxMessage[]>();
  nextMessageId = new Map<number, number>();
  calls: ApiCall[] = [];
  faults: Fault[] = [];
  /** Updates the bot has not yet taken: not yet confirmed by a getUpdates offset, or not yet taken by the webhook. */
  updates: Update[] = [];
  nextUpdateId = 1;
  callbackAnswers: CallbackAnswer[] = [];
  /** setMyCommands' lists by scope: `default`, `all_private_chats`, `all_group_chats`, `all_chat_administrators`, `chat:<id>`. */
  commandScopes = new Map<string, unknown[]>();
  /** setChatMenuButton's buttons: the default one (key null) and each private chat's own. */
  menuButtons = new Map<number | null, MenuButton>();
  pendingCallbacks = new Map<string, { chat_id: number; message_id: number; data: string }>();
  /** Per chat, who is in it and with what status (getChatMember, getChatAdministrators). */
  members = new Map<number, Map<number, ChatMember>>();
  /** The content of every document sent (sendDocument), by file_id: tests read the files here. */
  documents = new Map<string, Buffer>();
  /** Every photo sent (sendPhoto), by file_id: tests read them here, the page shows them (`GET /sandbox/files/<file_id>`). */
  photos = new Map<string, { content: Buffer; mimeType: string }>();
  /** Set by setWebhook: updates go there, and getUpdates is refused. */
  webhook: Webhook | null = null;
  webhookDeliveries: WebhookDelivery[] = [];
  polls: Poll[] = [];
  /** getUpdates polls ended by a newer one ("terminated by other getUpdates request"): two bot instances polling. */
  pollConflicts = 0;
  /** Users who blocked the bot: a send to their private chat answers 403 "Forbidden: bot was blocked by the user". */
  blocked = new Set<number>();

  /** Each chat as it was added: `reset()` brings chats (their topics, a migration) back to this. */
  private readonly initialChats = new Map<number, SandboxChat>();

  constructor(
    chats: SandboxChat[] = DEFAULT_CHATS,
    private readonly lowestMessageId = 1,
  ) {
    super();
    this.setMaxListeners(100);
    for (const chat of chats) this.addChat(chat);
  }

  addChat(chat: SandboxChat): void {
    this.chats.set(chat.id, cloneChat(chat));
    this.initialChats.set(chat.id, cloneChat(chat));
    if (!this.messages.has(chat.id)) this.messages.set(chat.id, []);
    if (!this.members.has(chat.id)) this.seedMembers(chat.id);
  }

  /** Takes the chat as it is now as the one `reset()` brings back (a chat added with its topics). */
  remember(chatId: number): void {
    const chat = this.chats.get(chatId);
    if (chat) this.initialChats.set(chatId, cloneChat(chat));
  }

  /** A topic of a forum chat that was not deleted, or undefined. */
  topic(chatId: number, threadId: number): SandboxTopic | undefined {
    return this.chats.get(chatId)?.topics?.find((t) => t.id === threadId && !t.deleted);
  }

  /**
   * Creates a topic in a chat, which becomes a forum if it was not; its id is the next message id of the chat (as in
   * Telegram), or `id` when given (a free one). Returns the id.
   */
  createTopic(chatId: number, name: string, id?: number): number {
    const chat = this.chats.get(chatId);
    if (!chat) throw new Error(`no chat ${chatId}`);
    if (chat.type !== 'supergroup') throw new Error(`chat ${chatId} is not a supergroup: only supergroups have topics`);
    if (name.trim() === '' || name.length > 128) throw new Error('a topic name is 1–128 characters');
    const topics = (chat.topics ??= []);
    let threadId = id ?? this.takeMessageId(chatId);
    if (id !== undefined) {
      if (!Number.isInteger(id) || id < 2) throw new Error('a topic id is a whole number above 1 (1 is the General topic)');
      if (topics.some((t) => t.id === id) || this.message(chatId, id))
        throw new Error(`chat ${chatId} already has a message or topic ${id}`);
      // Later messages get higher ids than the topic, as in Telegram.
      if ((this.nextMessageId.get(chatId) ?? this.firstMessageId(chatId)) <= id) this.nextMessageId.set(chatId, id + 1);
      threadId = id;
    }
    chat.is_forum = true;
    topics.push({ id: threadId, name });
    this.changed();
    return threadId;
  }

  /** Closes, reopens or deletes a topic (a deleted topic's messages are deleted with it). */
  setTopic(chatId: number, threadId: number, change: 'close' | 'reopen' | 'delete'): void {
    const topic = this.topic(chatId, threadId);
    if (!topic) throw new Error(`no topic ${threadId} in chat ${chatId}`);
    if (change === 'delete') {
      topic.deleted = true;
      this.messages.set(
        chatId,
        (this.messages.get(chatId) ?? []).filter((m) => m.message_thread_id !== threadId),
      );
    } else {
      topic.closed = change === 'close';
    }
    this.changed();
  }

  /** The first message id of a chat: after the ids its topics took, and not below the sandbox's lowest. */
  private firstMessageId(chatId: number): number {
    return Math.max(this.lowestMessageId - 1, ...(this.chats.get(chatId)?.topics ?? []).map((t) => t.id)) + 1;
  }

  private takeMessageId(chatId: number): number {
    const id = this.nextMessageId.get(chatId) ?? this.firstMessageId(chatId);
    this.nextMessageId.set(chatId, id + 1);
    return id;
  }

  /**
   * A group starts with DEFAULT_USER as its creator and the bot as an administrator (or as the chat's `bot` says); a
   * private chat with nobody.
   */
  private seedMembers(chatId: number): void {
    const roster = new Map<number, ChatMember>();
    const chat = this.chats.get(chatId);
    if (chat?.type !== 'private') {
      roster.set(DEFAULT_USER.id, { user: DEFAULT_USER, status: 'creator' });
      const bot = chat?.bot === undefined ? { status: 'administrator' as const } : chat.bot;
      if (bot) roster.set(BOT_USER.id, { user: BOT_USER, status: bot.status, ...(bot.rights ? { rights: { ...bot.rights } } : {}) });
    }
    this.members.set(chatId, roster);
  }

  member(chatId: number, userId: number): ChatMember | undefined {
    return this.members.get(chatId)?.get(userId);
  }

  /** Sets a user's status in a chat (an administrator, a plain member, left...), with its rights when given. */
  setMember(chatId: number, user: SandboxUser, status: MemberStatus, rights?: MemberRights): void {
    if (!this.chats.has(chatId)) throw new Error(`no chat ${chatId}`);
    if (!this.members.has(chatId)) this.members.set(chatId, new Map());
    this.members.get(chatId)!.set(user.id, { user: { ...user }, status, ...(rights ? { rights: { ...rights } } : {}) });
    this.changed();
  }

  /** The bot is in the chat (a member, restricted but still in it, an administrator): it gets the chat's updates. */
  botIsIn(chatId: number): boolean {
    if (this.chats.get(chatId)?.type === 'private') return true;
    const me = this.member(chatId, BOT_USER.id);
    if (!me || me.status === 'left' || me.status === 'kicked') return false;
    return me.status !== 'restricted' || me.rights?.is_member !== false;
  }

  /** Someone who writes or presses in a group is in it: a plain member unless they already have a status. */
  join(chatId: number, user: SandboxUser): void {
    if (this.chats.get(chatId)?.type === 'private' || this.member(chatId, user.id)) return;
    this.members.get(chatId)?.set(user.id, { user: { ...user }, status: 'member' });
  }

  /** Any chat's record of this user (the sandbox has "seen" them), or undefined. */
  knownUser(userId: number): SandboxUser | undefined {
    for (const roster of this.members.values()) {
      const found = roster.get(userId);
      if (found) return found.user;
    }
    return undefined;
  }

  message(chatId: number, messageId: number): SandboxMessage | undefined {
    return this.messages.get(chatId)?.find((m) => m.message_id === messageId);
  }

  addMessage(msg: Omit<SandboxMessage, 'message_id' | 'history'>): SandboxMessage {
    const id = this.takeMessageId(msg.chat_id);
    const full: SandboxMessage = { ...msg, message_id: id, history: [] };
    this.messages.get(msg.chat_id)!.push(full);
    this.changed();
    return full;
  }

  pushUpdate(update: Record<string, unknown>): number {
    const update_id = this.nextUpdateId++;
    const full: Update = { update_id, ...update };
    // Telegram does not even queue an update the webhook's allowed_updates leave out.
    if (!this.allows(full)) return update_id;
    this.updates.push(full);
    this.emit('update');
    return update_id;
  }

  private allows(update: Update): boolean {
    const allowed = this.webhook?.allowed_updates;
    return !allowed || allowed.includes(updateType(update) ?? '');
  }

  setWebhook(webhook: Webhook, dropPending: boolean): void {
    this.webhook = webhook;
    this.updates = dropPending ? [] : this.updates.filter((u) => this.allows(u));
    this.emit('webhook');
    this.changed();
  }

  deleteWebhook(dropPending: boolean): void {
    this.webhook = null;
    if (dropPending) this.updates = [];
    this.emit('webhook');
    this.changed();
  }

  /** getWebhookInfo's answer. The secret token is not in it: Telegram never gives it back. */
  webhookInfo(): Record<string, unknown> {
    const hook = this.webhook;
    if (!hook) return { url: '', has_custom_certificate: false, pending_update_count: this.updates.length };
    return {
      url: hook.url,
      has_custom_certificate: false,
      pending_update_count: this.updates.length,
      ...(hook.allowed_updates && { allowed_updates: hook.allowed_updates }),
      ...(hook.last_error_date !== undefined && { last_error_date: hook.last_error_date, last_error_message: hook.last_error_message }),
      max_connections: 40,
    };
  }

  /** The webhook took the update: it leaves the queue. */
  delivered(updateId: number): void {
    this.updates = this.updates.filter((u) => u.update_id !== updateId);
    this.changed();
  }

  webhookFailed(hook: Webhook, message: string): void {
    hook.last_error_date = Math.floor(Date.now() / 1000);
    hook.last_error_message = message;
    this.changed();
  }

  recordDelivery(delivery: WebhookDelivery): void {
    this.webhookDeliveries.push(delivery);
    if (this.webhookDeliveries.length > MAX_DELIVERIES_KEPT) this.webhookDeliveries.shift();
  }

  /** Takes the first matching fault, or null. */
  takeFault(method: string, params: Record<string, unknown> = {}): Fault | null {
    const fault = this.faults.find(
      (f) =>
        f.remaining > 0 &&
        (f.method === method || (f.method === '*' && method !== 'getUpdates')) &&
        (f.chat_id === undefined || String(f.chat_id) === String(params.chat_id)),
    );
    if (!fault) return null;
    fault.remaining -= 1;
    this.faults = this.faults.filter((f) => f.remaining > 0);
    return fault;
  }

  /** The commands a group's menu lists: those set for all groups, else the default ones. */
  get commands(): unknown[] {
    return this.commandScopes.get('all_group_chats') ?? this.commandScopes.get('default') ?? [];
  }

  /** The commands a private chat's menu lists: that chat's own, those set for all private chats, else the default ones. */
  privateCommands(chatId: number): unknown[] {
    const scopes = this.commandScopes;
    return scopes.get(`chat:${chatId}`) ?? scopes.get('all_private_chats') ?? scopes.get('default') ?? [];
  }

  setMenuButton(chatId: number | null, button: MenuButton): void {
    if (button.type === 'default' && chatId !== null) this.menuButtons.delete(chatId);
    else this.menuButtons.set(chatId, button);
    this.changed();
  }

  /** A private chat's menu button: its own, else the default set for all, else Telegram's (the commands list). */
  menuButton(chatId: number | null): MenuButton {
    const own = chatId !== null ? this.menuButtons.get(chatId) : undefined;
    const fallback = this.menuButtons.get(null);
    return own ?? (fallback && fallback.type !== 'default' ? fallback : { type: 'commands' });
  }

  changed(): void {
    this.emit('change');
  }

  reset(): void {
    for (const id of this.messages.keys()) this.messages.set(id, []);
    this.nextMessageId.clear();
    this.calls = [];
    this.faults = [];
    this.updates = [];
    this.callbackAnswers = [];
    this.commandScopes.clear();
    this.menuButtons.clear();
    this.documents.clear();
    this.photos.clear();
    this.pendingCallbacks.clear();
    this.webhook = null;
    this.webhookDeliveries = [];
    this.polls = [];
    this.pollConflicts = 0;
    this.blocked.clear();
    // Every chat as it was added: no migration, its topics as they were (open, none created since).
    for (const [id, chat] of this.initialChats) this.chats.set(id, cloneChat(chat));
    for (const id of this.chats.keys()) this.seedMembers(id);
    this.emit('webhook');
    this.changed();
  }

  snapshot() {
    return {
      chats: [...this.chats.values()].map((chat) => ({
        ...chat,
        messages: this.messages.get(chat.id) ?? [],
        members: [...(this.members.get(chat.id)?.values() ?? [])],
      })),
      callbackAnswers: this.callbackAnswers,
      commands: this.commands,
      menuButton: this.menuButton(null),
      webhook: this.webhookInfo(),
      pollConflicts: this.pollConflicts,
    };
  }
}
