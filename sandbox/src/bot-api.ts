import { type MessageEntity, parseHtml } from './html';
import {
  BOT_USER,
  type ChatMember,
  type MemberStatus,
  type ReplyMarkup,
  type SandboxChat,
  type SandboxMessage,
  type SandboxState,
  type Webhook,
} from './state';

/** A Bot API answer: `result` on success, or Telegram's error shape. */
export type ApiAnswer =
  | { ok: true; result: unknown }
  | { ok: false; error_code: number; description: string; parameters?: { retry_after?: number; migrate_to_chat_id?: number } };

export class ApiError extends Error {
  constructor(
    readonly code: number,
    readonly description: string,
    readonly parameters?: { retry_after?: number; migrate_to_chat_id?: number },
  ) {
    super(description);
  }
}

const bad = (description: string, parameters?: ApiError['parameters']) => new ApiError(400, `Bad Request: ${description}`, parameters);

/** Telegram's limits, in UTF-16 code units of the text after entity parsing (what `String.length` counts). */
const MAX_TEXT = 4096;
const MAX_CALLBACK_ANSWER = 200;
const MAX_CALLBACK_DATA_BYTES = 64;

/**
 * The chat of a call the bot makes. As in Telegram, a group the bot was never in is "chat not found", and one it left
 * or was removed from answers 403.
 */
function chatOf(state: SandboxState, raw: unknown): SandboxChat {
  if (raw === undefined || raw === null || raw === '') throw bad('chat_id is empty');
  const id = typeof raw === 'number' ? raw : typeof raw === 'string' && /^-?\d+$/.test(raw) ? Number(raw) : NaN;
  const chat = state.chats.get(id);
  if (!chat) throw bad('chat not found');
  if (chat.migratedTo !== undefined) {
    throw bad('group chat was upgraded to a supergroup chat', { migrate_to_chat_id: chat.migratedTo });
  }
  if (!state.botIsIn(chat.id)) {
    const me = state.member(chat.id, BOT_USER.id);
    const kind = chat.type === 'group' ? 'group chat' : 'supergroup chat';
    if (!me) throw bad('chat not found');
    throw new ApiError(
      403,
      me.status === 'kicked' ? `Forbidden: bot was kicked from the ${kind}` : `Forbidden: bot is not a member of the ${kind}`,
    );
  }
  return chat;
}

/**
 * Whether the bot may post in the chat: an administrator always; a restricted bot when its own `can_send_messages`
 * says so; a plain member unless the group's permissions keep members from writing.
 */
function botMayWrite(state: SandboxState, chat: SandboxChat): boolean {
  if (chat.type === 'private') return true;
  const me = state.member(chat.id, BOT_USER.id);
  if (!me) return false;
  if (me.status === 'creator' || me.status === 'administrator') return true;
  if (me.status === 'restricted') return me.rights?.can_send_messages === true;
  return chat.permissions?.can_send_messages !== false;
}

function mustWrite(state: SandboxState, chat: SandboxChat, what: 'text messages' | 'documents' | 'photos' | 'messages'): void {
  if (chat.type === 'private' && state.blocked.has(chat.id)) throw new ApiError(403, 'Forbidden: bot was blocked by the user');
  if (!botMayWrite(state, chat)) throw bad(`not enough rights to send ${what} to the chat`);
}

function int(raw: unknown, name: string): number {
  const n = typeof raw === 'number' ? raw : Number(raw);
  if (!Number.isInteger(n)) throw bad(`${name} is invalid`);
  return n;
}

/** A BotCommandScope as the key its list is kept under; a scope Telegram does not know is refused. */
function commandScope(state: SandboxState, raw: unknown): string {
  const scope = json<{ type?: unknown; chat_id?: unknown }>(raw) ?? { type: 'default' };
  const type = scope.type;
  if (type === 'default' || type === 'all_private_chats' || type === 'all_group_chats' || type === 'all_chat_administrators') return type;
  if (type === 'chat') return `chat:${chatOf(state, scope.chat_id).id}`;
  throw bad('unsupported bot command scope type');
}

function json<T>(raw: unknown): T | undefined {
  if (raw === undefined || raw === null || raw === '') return undefined;
  if (typeof raw === 'string') {
    try {
      return JSON.parse(raw) as T;
    } catch {
      throw bad("can't parse JSON object");
    }
  }
  return raw as T;
}

/** A Mini App's address: https, as Telegram wants it (http on the loopback too, for a local inbox). */
function webAppUrl(raw: unknown): boolean {
  if (typeof raw !== 'string' || !URL.canParse(raw)) return false;
  const url = new URL(raw);
  return url.protocol === 'https:' || (url.protocol === 'http:' && ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname));
}

/**
 * An inline keyboard, refused as Telegram refuses it. A `web_app` button opens a Mini App: only in a private chat
 * (elsewhere "BUTTON_TYPE_INVALID"), with an https address ("BUTTON_URL_INVALID").
 */
function checkMarkup(raw: unknown, chat?: SandboxChat): ReplyMarkup | undefined {
  const markup = json<ReplyMarkup>(raw);
  if (markup === undefined) return undefined;
  if (!markup || !Array.isArray(markup.inline_keyboard)) throw bad("can't parse reply keyboard markup JSON object");
  for (const row of markup.inline_keyboard) {
    if (!Array.isArray(row)) throw bad('field "inline_keyboard" of the InlineKeyboardMarkup should be an Array of Arrays');
    for (const button of row) {
      if (!button || typeof button.text !== 'string' || button.text === '') throw bad('text buttons are unallowed in the inline keyboard');
      if (button.callback_data !== undefined) {
        const bytes = Buffer.byteLength(String(button.callback_data), 'utf8');
        if (bytes < 1 || bytes > MAX_CALLBACK_DATA_BYTES) throw bad('BUTTON_DATA_INVALID');
      } else if (button.url !== undefined) {
        if (!/^(https?|tg):\/\/\S+$/.test(String(button.url))) throw bad(`inline keyboard button URL '${button.url}' is invalid`);
      } else if (button.web_app !== undefined) {
        if (chat && chat.type !== 'private') throw bad('BUTTON_TYPE_INVALID');
        if (!button.web_app || typeof button.web_app !== 'object' || !webAppUrl(button.web_app.url)) throw bad('BUTTON_URL_INVALID');
      } else {
        throw bad('can\'t find field "callback_data" or "url"');
      }
    }
  }
  return markup;
}

/** The message text and entities from `text` + `parse_mode` or `text` + `entities`, checked as Telegram does. */
function readText(params: Record<string, unknown>): { text: string; entities: MessageEntity[] } {
  if (typeof params.text !== 'string' && typeof params.text !== 'number') throw bad('message text is empty');
  const raw = String(params.text);
  let text = raw;
  let entities: MessageEntity[] = [];
  const mode = typeof params.parse_mode === 'string' ? params.parse_mode.toLowerCase() : '';
  if (mode === 'html') {
    const parsed = parseHtml(raw);
    if (!parsed.ok) throw bad(parsed.error.replace(/^Bad Request: /, ''));
    text = parsed.text;
    entities = parsed.entities;
  } else if (mode !== '') {
    if (mode !== 'markdownv2' && mode !== 'markdown') throw bad(`unsupported parse_mode`);
  } else if (params.entities !== undefined) {
    entities = json<MessageEntity[]>(params.entities) ?? [];
    if (!Array.isArray(entities)) throw bad("can't parse entities JSON object");
    for (const e of entities) {
      if (!Number.isInteger(e.offset) || !Number.isInteger(e.length) || e.offset < 0 || e.length < 1 || e.offset + e.length > text.length) {
        throw bad("can't parse entities: entity beyond the end of the text");
      }
      if (e.type === 'text_link' && !/^(https?|tg):\/\/\S+$/.test(String(e.url))) throw bad("can't parse entities: wrong url");
    }
  }
  if (text.trim() === '') throw bad('message text is empty');
  if (text.length > MAX_TEXT) throw bad('message is too long');
  return { text, entities };
}

function present(state: SandboxState, msg: SandboxMessage): Record<string, unknown> {
  const chat = state.chats.get(msg.chat_id)!;
  const out: Record<string, unknown> = {
    message_id: msg.message_id,
    ...(msg.message_thread_id !== undefined ? { message_thread_id: msg.message_thread_id, is_topic_message: true } : {}),
    from: msg.from,
    chat: presentChat(chat),
    date: msg.date,
    text: msg.text,
  };
  if (msg.voice) {
    out.voice = msg.voice;
    if (msg.text) out.caption = msg.text;
    delete out.text;
  }
  if (msg.photo) {
    out.photo = msg.photo;
    if (msg.text) out.caption = msg.text;
    delete out.text;
  }
  if (msg.document) {
    out.document = msg.document;
    if (msg.text) out.caption = msg.text;
    delete out.text;
  }
  if (msg.entities.length > 0) out.entities = msg.entities;
  if (msg.reply_markup) out.reply_markup = msg.reply_markup;
  if (msg.edit_date) out.edit_date = msg.edit_date;
  if (msg.reply_to_message_id) {
    const replied = state.message(msg.chat_id, msg.reply_to_message_id);
    if (replied) out.reply_to_message = present(state, { ...replied, reply_to_message_id: undefined });
  }
  return out;
}

export { present as presentMessage };

/**
 * A message carrying an uploaded file (`sendDocument`, `sendPhoto`): its caption (at most 1024 characters), the reply
 * and the topic as for a text, checked before `attach` keeps the file and gives the message's file fields.
 */
function fileMessage(
  state: SandboxState,
  chat: SandboxChat,
  params: Record<string, unknown>,
  attach: () => Pick<SandboxMessage, 'document' | 'photo' | 'reply_markup'>,
): Record<string, unknown> {
  const caption = typeof params.caption === 'string' ? params.caption : '';
  if (caption.length > 1024) throw bad('message caption is too long');
  const reply_to_message_id = replyTarget(state, chat, params);
  const message_thread_id = threadOf(state, chat, params, reply_to_message_id);
  const msg = state.addMessage({
    chat_id: chat.id,
    date: now(),
    from: BOT_USER,
    text: caption,
    entities: [],
    reply_to_message_id,
    ...(message_thread_id !== undefined ? { message_thread_id } : {}),
    ...attach(),
  });
  return present(state, msg);
}

function replyTarget(state: SandboxState, chat: SandboxChat, params: Record<string, unknown>): number | undefined {
  const reply = json<{ message_id?: number; allow_sending_without_reply?: boolean }>(params.reply_parameters);
  const id =
    reply?.message_id ?? (params.reply_to_message_id !== undefined ? int(params.reply_to_message_id, 'reply_to_message_id') : undefined);
  if (id === undefined) return undefined;
  if (!state.message(chat.id, id)) {
    if (reply?.allow_sending_without_reply || params.allow_sending_without_reply) return undefined;
    throw bad('message to be replied not found');
  }
  return id;
}

/**
 * The forum topic a new message goes into: `message_thread_id` when given, else the topic of the message
 * it replies to (as Telegram places a reply), else none. Telegram refuses a topic that is not there ("message thread
 * not found": unknown, deleted, or a chat without topics) and a closed one ("TOPIC_CLOSED").
 */
function threadOf(
  state: SandboxState,
  chat: SandboxChat,
  params: Record<string, unknown>,
  replyTo: number | undefined,
): number | undefined {
  const raw = params.message_thread_id;
  const given = raw !== undefined && raw !== null && raw !== '' ? int(raw, 'message_thread_id') : undefined;
  const id = given ?? (replyTo !== undefined ? state.message(chat.id, replyTo)?.message_thread_id : undefined);
  if (id === undefined) return undefined;
  const topic = chat.is_forum ? state.topic(chat.id, id) : undefined;
  if (!topic) throw bad('message thread not found');
  if (topic.closed) throw bad('TOPIC_CLOSED');
  return id;
}

/** A forum chat's topic for the forum methods; Telegram's errors for a chat without topics or an unknown one. */
function forumTopic(state: SandboxState, params: Record<string, unknown>): { chat: SandboxChat; threadId: number } {
  const chat = chatOf(state, params.chat_id);
  if (!chat.is_forum) throw bad('the chat is not a forum');
  const threadId = int(params.message_thread_id, 'message_thread_id');
  if (!state.topic(chat.id, threadId)) throw bad('TOPIC_ID_INVALID');
  return { chat, threadId };
}

const now = () => Math.floor(Date.now() / 1000);

/** Telegram's limits on a photo: 10 MB, width + height at most 10 000, sides at most 20 to 1. */
const MAX_PHOTO_BYTES = 10 * 1024 * 1024;

/**
 * The size of a PNG (its IHDR) or a JPEG (its first start-of-frame), as Telegram reads an uploaded photo; null for
 * anything else, which Telegram refuses ("IMAGE_PROCESS_FAILED").
 */
export function imageSize(bytes: Buffer): { width: number; height: number; mimeType: string } | null {
  const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  if (bytes.length >= 24 && bytes.subarray(0, 8).equals(png) && bytes.toString('latin1', 12, 16) === 'IHDR') {
    return { width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20), mimeType: 'image/png' };
  }
  if (bytes.length >= 4 && bytes[0] === 0xff && bytes[1] === 0xd8) {
    let at = 2;
    while (at + 9 < bytes.length && bytes[at] === 0xff) {
      const marker = bytes[at + 1];
      const length = bytes.readUInt16BE(at + 2);
      // SOF0…SOF15 but DHT (C4), JPG (C8) and DAC (CC): height then width.
      if (marker >= 0xc0 && marker <= 0xcf && ![0xc4, 0xc8, 0xcc].includes(marker)) {
        return { width: bytes.readUInt16BE(at + 7), height: bytes.readUInt16BE(at + 5), mimeType: 'image/jpeg' };
      }
      at += 2 + length;
    }
  }
  return null;
}

const flag = (raw: unknown) => raw === true || raw === 'true';

const MAX_SECRET_TOKEN = 256;

/**
 * setWebhook's parameters, refused as Telegram refuses them, or null for an empty url (which removes the webhook in
 * Telegram). Telegram wants https; the sandbox takes http too, since the bots it serves listen on loopback.
 */
function readWebhook(state: SandboxState, params: Record<string, unknown>): Webhook | null {
  const raw = params.url;
  if (raw === undefined || raw === null || raw === '') return null;
  if (typeof raw !== 'string' || !URL.canParse(raw) || !['https:', 'http:'].includes(new URL(raw).protocol)) {
    throw bad('bad webhook: An HTTPS URL must be provided for webhook');
  }
  // An empty secret token is none.
  const token = params.secret_token ?? '';
  if (typeof token !== 'string' && typeof token !== 'number') throw bad('secret token contains unallowed characters');
  const secret = String(token);
  if (secret.length > MAX_SECRET_TOKEN) throw bad('secret token is too long');
  if (secret !== '' && !/^[A-Za-z0-9_-]+$/.test(secret)) throw bad('secret token contains unallowed characters');
  const webhook: Webhook = { url: raw };
  if (secret !== '') webhook.secret_token = secret;
  // Left out, allowed_updates keeps the previous setting; an empty list means every type.
  const allowed = params.allowed_updates === undefined ? state.webhook?.allowed_updates : json<unknown>(params.allowed_updates);
  if (allowed !== undefined && (!Array.isArray(allowed) || allowed.some((t) => typeof t !== 'string'))) {
    throw bad('allowed updates must be an array of strings');
  }
  if (allowed && allowed.length > 0) webhook.allowed_updates = allowed as string[];
  return webhook;
}

/** An administrator's rights, as a bot promoted with the defaults has them; `rights` turns some off. */
const ADMIN_RIGHTS = {
  can_manage_chat: true,
  can_delete_messages: true,
  can_manage_video_chats: true,
  can_restrict_members: true,
  can_promote_members: false,
  can_change_info: true,
  can_invite_users: true,
  can_pin_messages: true,
};
/** A restricted member's permissions: none unless `rights` grants them. */
const RESTRICTED_PERMISSIONS = {
  can_send_messages: false,
  can_send_audios: false,
  can_send_documents: false,
  can_send_photos: false,
  can_send_videos: false,
  can_send_video_notes: false,
  can_send_voice_notes: false,
  can_send_polls: false,
  can_send_other_messages: false,
  can_add_web_page_previews: false,
  can_change_info: false,
  can_invite_users: false,
  can_pin_messages: false,
  can_manage_topics: false,
};
/** A group's default permissions for its members (getChat), unless the chat's `permissions` say otherwise. */
const GROUP_PERMISSIONS = {
  ...Object.fromEntries(Object.keys(RESTRICTED_PERMISSIONS).map((k) => [k, true])),
  can_change_info: false,
  can_pin_messages: false,
  can_manage_topics: false,
};

/** A ChatMember object as Telegram gives it: the fields depend on the status (and, for an administrator, on the chat). */
function presentMember(m: ChatMember, chat?: SandboxChat): Record<string, unknown> {
  switch (m.status) {
    case 'creator':
      return { status: m.status, user: m.user, is_anonymous: false };
    case 'administrator':
      return {
        status: m.status,
        user: m.user,
        can_be_edited: false,
        is_anonymous: false,
        ...ADMIN_RIGHTS,
        ...(chat?.type === 'supergroup' ? { can_manage_topics: true } : {}),
        ...m.rights,
      };
    case 'restricted':
      return { status: m.status, user: m.user, is_member: true, ...RESTRICTED_PERMISSIONS, ...m.rights, until_date: 0 };
    case 'kicked':
      return { status: m.status, user: m.user, until_date: 0 };
    default:
      return { status: m.status, user: m.user };
  }
}

export { presentMember };

/** A chat as updates and messages carry it. */
export function presentChat(chat: SandboxChat): Record<string, unknown> {
  return { id: chat.id, type: chat.type, title: chat.title, ...(chat.is_forum ? { is_forum: true } : {}) };
}

/** A status a member may be given; anything else is refused. */
export const MEMBER_STATUSES: MemberStatus[] = ['creator', 'administrator', 'member', 'restricted', 'left', 'kicked'];

/** The Bot API methods the project calls. Each throws ApiError where Telegram would answer with an error. */
export const METHODS: Record<string, (state: SandboxState, params: Record<string, unknown>) => unknown> = {
  getMe: () => ({ ...BOT_USER, can_join_groups: true, can_read_all_group_messages: false, supports_inline_queries: false }),
  setWebhook: (state, params) => {
    const webhook = readWebhook(state, params);
    if (webhook) state.setWebhook(webhook, flag(params.drop_pending_updates));
    else state.deleteWebhook(flag(params.drop_pending_updates));
    return true;
  },
  deleteWebhook: (state, params) => {
    state.deleteWebhook(flag(params.drop_pending_updates));
    return true;
  },
  getWebhookInfo: (state) => state.webhookInfo(),
  // A list per scope, as Telegram keeps them; an empty list deletes the scope's. getMyCommands gives the scope's own.
  setMyCommands: (state, params) => {
    const commands = json<unknown[]>(params.commands);
    if (!Array.isArray(commands)) throw bad('commands must be an array');
    const scope = commandScope(state, params.scope);
    if (commands.length === 0) state.commandScopes.delete(scope);
    else state.commandScopes.set(scope, commands);
    state.changed();
    return true;
  },
  deleteMyCommands: (state, params) => {
    state.commandScopes.delete(commandScope(state, params.scope));
    state.changed();
    return true;
  },
  getMyCommands: (state, params) => state.commandScopes.get(commandScope(state, params.scope)) ?? [],
  // The button beside a private chat's input field: the default (no chat_id) or one private chat's.
  setChatMenuButton: (state, params) => {
    const button = json<Record<string, unknown>>(params.menu_button) ?? { type: 'default' };
    if (!button || typeof button !== 'object' || Array.isArray(button)) throw bad("can't parse menu button JSON object");
    let chatId: number | null = null;
    if (params.chat_id !== undefined && params.chat_id !== '') {
      const chat = chatOf(state, params.chat_id);
      if (chat.type !== 'private') throw bad('chat_id must be a private chat');
      chatId = chat.id;
    }
    if (button.type === 'web_app') {
      if (typeof button.text !== 'string' || button.text.trim() === '') throw bad('menu button text is empty');
      const app = button.web_app as { url?: unknown } | undefined;
      if (!app || typeof app !== 'object' || !webAppUrl(app.url)) throw bad('BUTTON_URL_INVALID');
      state.setMenuButton(chatId, { type: 'web_app', text: button.text, web_app: { url: String(app.url) } });
    } else if (button.type === 'commands' || button.type === 'default') {
      state.setMenuButton(chatId, { type: button.type });
    } else {
      throw bad('unsupported menu button type');
    }
    return true;
  },
  getChatMenuButton: (state, params) => {
    const id = params.chat_id !== undefined && params.chat_id !== '' ? chatOf(state, params.chat_id).id : null;
    return state.menuButton(id);
  },
  getChat: (state, params) => {
    const chat = chatOf(state, params.chat_id);
    if (chat.type === 'private') return presentChat(chat);
    return { ...presentChat(chat), permissions: { ...GROUP_PERMISSIONS, ...chat.permissions } };
  },
  getChatMember: (state, params) => {
    const chat = chatOf(state, params.chat_id);
    const userId = int(params.user_id, 'user_id');
    const member = state.member(chat.id, userId);
    if (member) return presentMember(member, chat);
    // Someone the bot has seen elsewhere but who is not in this chat; nobody at all is an error.
    const user = state.knownUser(userId);
    if (!user) throw bad('user not found');
    return presentMember({ user, status: 'left' });
  },
  // How many are in the chat: its `member_count` when set, else the members of its roster that are in it.
  getChatMemberCount: (state, params) => {
    const chat = chatOf(state, params.chat_id);
    if (chat.member_count !== undefined) return chat.member_count;
    const roster = [...(state.members.get(chat.id)?.values() ?? [])];
    const inChat = (m: ChatMember) =>
      !['left', 'kicked'].includes(m.status) && (m.status !== 'restricted' || m.rights?.is_member !== false);
    return roster.filter(inChat).length;
  },
  getChatAdministrators: (state, params) => {
    const chat = chatOf(state, params.chat_id);
    if (chat.type === 'private') throw bad('there are no administrators in the private chat');
    const roster = [...(state.members.get(chat.id)?.values() ?? [])];
    return roster.filter((m) => m.status === 'creator' || m.status === 'administrator').map((m) => presentMember(m, chat));
  },
  // The bot "is typing": in a topic when given (refused as a message would be: unknown or closed topic, no right to write).
  sendChatAction: (state, params) => {
    const chat = chatOf(state, params.chat_id);
    if (typeof params.action !== 'string' || params.action === '') throw bad('wrong parameter action in request');
    threadOf(state, chat, params, undefined);
    mustWrite(state, chat, 'text messages');
    return true;
  },
  sendMessage: (state, params) => {
    const chat = chatOf(state, params.chat_id);
    mustWrite(state, chat, 'text messages');
    const { text, entities } = readText(params);
    const reply_markup = checkMarkup(params.reply_markup, chat);
    const reply_to_message_id = replyTarget(state, chat, params);
    const message_thread_id = threadOf(state, chat, params, reply_to_message_id);
    const msg = state.addMessage({
      chat_id: chat.id,
      date: now(),
      from: BOT_USER,
      text,
      entities,
      reply_markup,
      reply_to_message_id,
      ...(message_thread_id !== undefined ? { message_thread_id } : {}),
    });
    return present(state, msg);
  },
  sendDocument: (state, params) => {
    const chat = chatOf(state, params.chat_id);
    mustWrite(state, chat, 'documents');
    const file = params.document as { filename?: string; content?: unknown; contentType?: string } | undefined;
    if (!file || typeof file !== 'object' || !Buffer.isBuffer(file.content)) throw bad('there is no document in the request');
    if (file.content.length === 0) throw bad('file must be non-empty');
    const file_id = `doc-${state.documents.size + 1}-${Date.now()}`;
    return fileMessage(state, chat, params, () => {
      state.documents.set(file_id, file.content as Buffer);
      return {
        document: {
          file_id,
          file_name: file.filename ?? 'document',
          file_size: (file.content as Buffer).length,
          mime_type: file.contentType,
        },
      };
    });
  },
  // A photo uploaded as multipart/form-data (`photo`), as telegraf sends `{ source, filename }`; a caption of at most
  // 1024 characters. The answer's `photo` has the original size only (Telegram adds thumbnails).
  sendPhoto: (state, params) => {
    const chat = chatOf(state, params.chat_id);
    mustWrite(state, chat, 'photos');
    const file = params.photo as { filename?: string; content?: unknown } | undefined;
    if (!file || typeof file !== 'object' || !Buffer.isBuffer(file.content)) throw bad('there is no photo in the request');
    if (file.content.length === 0) throw bad('file must be non-empty');
    if (file.content.length > MAX_PHOTO_BYTES) throw bad('PHOTO_SAVE_FILE_INVALID');
    const size = imageSize(file.content);
    if (!size) throw bad('IMAGE_PROCESS_FAILED');
    const { width, height } = size;
    if (width === 0 || height === 0 || width + height > 10_000 || Math.max(width, height) / Math.min(width, height) > 20) {
      throw bad('PHOTO_INVALID_DIMENSIONS');
    }
    const file_id = `photo-${state.photos.size + 1}-${Date.now()}`;
    const content = file.content;
    return fileMessage(state, chat, params, () => {
      const reply_markup = checkMarkup(params.reply_markup, chat);
      state.photos.set(file_id, { content, mimeType: size.mimeType });
      return { reply_markup, photo: [{ file_id, file_unique_id: file_id, width, height, file_size: content.length }] };
    });
  },
  // A copy of any message the bot can see into another chat: text with its entities, or the media with its caption
  // (`caption` replaces it; refused for a text message, as Telegram does). No "forwarded from" header.
  copyMessage: (state, params) => {
    const chat = chatOf(state, params.chat_id);
    mustWrite(state, chat, 'messages');
    const from = chatOf(state, params.from_chat_id);
    const original = state.message(from.id, int(params.message_id, 'message_id'));
    if (!original) throw bad('message to copy not found');
    const media = original.photo !== undefined || original.document !== undefined || original.voice !== undefined;
    if (params.caption !== undefined && typeof params.caption !== 'string') throw bad('caption must be a string');
    if (params.caption !== undefined && !media) throw bad('message caption is not allowed for a text message');
    const text = typeof params.caption === 'string' ? params.caption : original.text;
    if (media && text.length > 1024) throw bad('message caption is too long');
    const reply_to_message_id = replyTarget(state, chat, params);
    const message_thread_id = threadOf(state, chat, params, reply_to_message_id);
    const msg = state.addMessage({
      chat_id: chat.id,
      date: now(),
      from: BOT_USER,
      text,
      entities: params.caption !== undefined ? [] : original.entities,
      reply_to_message_id,
      ...(message_thread_id !== undefined ? { message_thread_id } : {}),
      ...(original.photo ? { photo: original.photo } : {}),
      ...(original.document ? { document: original.document } : {}),
      ...(original.voice ? { voice: original.voice } : {}),
    });
    return { message_id: msg.message_id };
  },
  // The bot's reaction on a message: at most one emoji (a bot's limit), an empty list takes it away.
  setMessageReaction: (state, params) => {
    const chat = chatOf(state, params.chat_id);
    const msg = state.message(chat.id, int(params.message_id, 'message_id'));
    if (!msg) throw bad('message to react not found');
    const reaction = json<{ type?: string; emoji?: string }[]>(params.reaction) ?? [];
    if (!Array.isArray(reaction) || reaction.length > 1) throw bad('REACTIONS_TOO_MANY');
    const emojis = reaction.map((r) => {
      if (r?.type !== 'emoji' || typeof r.emoji !== 'string' || r.emoji === '') throw bad('REACTION_INVALID');
      return r.emoji;
    });
    msg.reactions = emojis;
    state.changed();
    return true;
  },
  editMessageText: (state, params) => {
    const chat = chatOf(state, params.chat_id);
    const msg = state.message(chat.id, int(params.message_id, 'message_id'));
    if (!msg) throw bad('message to edit not found');
    if (msg.from.id !== BOT_USER.id) throw bad("message can't be edited");
    const { text, entities } = readText(params);
    const reply_markup = checkMarkup(params.reply_markup, chat);
    const same =
      msg.text === text &&
      JSON.stringify(msg.entities) === JSON.stringify(entities) &&
      JSON.stringify(msg.reply_markup ?? null) === JSON.stringify(reply_markup ?? null);
    if (same) {
      throw bad(
        'message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message',
      );
    }
    msg.history.push({ text: msg.text, entities: msg.entities, reply_markup: msg.reply_markup, edited_at: Date.now() });
    msg.text = text;
    msg.entities = entities;
    msg.reply_markup = reply_markup;
    msg.edit_date = now();
    state.changed();
    return present(state, msg);
  },
  editMessageReplyMarkup: (state, params) => {
    const chat = chatOf(state, params.chat_id);
    const msg = state.message(chat.id, int(params.message_id, 'message_id'));
    if (!msg) throw bad('message to edit not found');
    const reply_markup = checkMarkup(params.reply_markup, chat);
    if (JSON.stringify(msg.reply_markup ?? null) === JSON.stringify(reply_markup ?? null)) {
      throw bad(
        'message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message',
      );
    }
    msg.history.push({ text: msg.text, entities: msg.entities, reply_markup: msg.reply_markup, edited_at: Date.now() });
    msg.reply_markup = reply_markup;
    msg.edit_date = now();
    state.changed();
    return present(state, msg);
  },
  deleteMessage: (state, params) => {
    const chat = chatOf(state, params.chat_id);
    const list = state.messages.get(chat.id)!;
    const index = list.findIndex((m) => m.message_id === int(params.message_id, 'message_id'));
    if (index < 0) throw bad('message to delete not found');
    list.splice(index, 1);
    state.changed();
    return true;
  },
  // Forum topics, as a bot with the right to manage them calls them.
  createForumTopic: (state, params) => {
    const chat = chatOf(state, params.chat_id);
    if (!chat.is_forum) throw bad('the chat is not a forum');
    const name = typeof params.name === 'string' ? params.name : '';
    if (name.trim() === '' || name.length > 128) throw bad('TOPIC_TITLE_EMPTY');
    const id = state.createTopic(chat.id, name);
    return { message_thread_id: id, name, icon_color: 7322096 };
  },
  closeForumTopic: (state, params) => {
    const { chat, threadId } = forumTopic(state, params);
    if (state.topic(chat.id, threadId)?.closed) throw bad('TOPIC_NOT_MODIFIED');
    state.setTopic(chat.id, threadId, 'close');
    return true;
  },
  reopenForumTopic: (state, params) => {
    const { chat, threadId } = forumTopic(state, params);
    if (!state.topic(chat.id, threadId)?.closed) throw bad('TOPIC_NOT_MODIFIED');
    state.setTopic(chat.id, threadId, 'reopen');
    return true;
  },
  deleteForumTopic: (state, params) => {
    const { chat, threadId } = forumTopic(state, params);
    state.setTopic(chat.id, threadId, 'delete');
    return true;
  },
  answerCallbackQuery: (state, params) => {
    const raw = params.callback_query_id;
    const id = typeof raw === 'string' || typeof raw === 'number' ? String(raw) : '';
    if (!state.pendingCallbacks.has(id)) throw bad('query is too old and response timeout expired or query ID is invalid');
    // Refused before the query is used up: a shorter answer to the same query still goes through, as in Telegram.
    if (typeof params.text === 'string' && params.text.length > MAX_CALLBACK_ANSWER) throw bad('MESSAGE_TOO_LONG');
    state.pendingCallbacks.delete(id);
    state.callbackAnswers.push({
      callback_query_id: id,
      text: typeof params.text === 'string' ? params.text : undefined,
      show_alert: flag(params.show_alert),
      at: Date.now(),
    });
    state.changed();
    return true;
  },
};
