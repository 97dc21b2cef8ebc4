import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApiError, MEMBER_STATUSES, METHODS, presentChat, presentMember, presentMessage, type ApiAnswer } from './bot-api';
import { CaptchaStandIn } from './captcha';
import { launchUrl, signInitData } from './init-data';
import { renderPage } from './page';
import {
  type ApiCall,
  BOT_USER,
  DEFAULT_USER,
  type Fault,
  type FaultKind,
  type MemberRights,
  type MemberStatus,
  type Poll,
  type SandboxChat,
  SandboxState,
  type SandboxUser,
  type WebhookDelivery,
} from './state';
import { BOT_LINK_PATH, openBotLink } from './visitor';
import { WebhookSender } from './webhook';

/**
 * What a member's message carries besides its text (`POST /sandbox/api/say`): the message it replies to, and a photo,
 * a document or a voice message (a generated `file_id`; `text` is then its caption and may be empty).
 */
export interface SayExtras {
  reply_to_message_id?: number;
  photo?: boolean;
  document?: boolean;
  voice?: boolean;
}

export interface SandboxOptions {
  port?: number;
  host?: string;
  /** The only token the sandbox accepts; calls with another get 401 as Telegram gives them. */
  token?: string;
  chats?: SandboxChat[];
  /** Longest getUpdates long poll honoured, in seconds (Telegram allows 50). */
  maxPollSeconds?: number;
  /** How long a webhook has to answer a delivery before it counts as failed (10 000 ms). */
  webhookTimeoutMs?: number;
  /** The wait before a failed webhook delivery is tried again (1000 ms). */
  webhookRetryMs?: number;
  /**
   * The inbox Mini App's address (SANDBOX_INBOX_URL): the page then offers "open the inbox as <user>" for each user it
   * knows, launched with launch data signed by the sandbox's token when clicked (`GET /sandbox/api/inbox?user_id=`).
   */
  inboxUrl?: string;
  /**
   * The lowest message id a chat gives (1, as a new Telegram chat). `npm run dev` starts each run past the last one's ids
   * (SANDBOX_FIRST_MESSAGE_ID), so that the cards its database keeps never name a message of this run.
   */
  firstMessageId?: number;
}

export const DEFAULT_TOKEN = '123456789:sandbox-token';
export { DEFAULT_USER };
const WEBHOOK_ACTIVE = "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first";
const TERMINATED_BY_POLL = 'Conflict: terminated by other getUpdates request; make sure that only one bot instance is running';
const TERMINATED_BY_WEBHOOK = 'Conflict: terminated by setWebhook request';
const conflict = (description: string): ApiAnswer => ({ ok: false, error_code: 409, description });
/**
 * How long a poll a newer one ends may take to show it was abandoned. A bot that stops polling (telegraf's stop())
 * aborts its long poll and at once sends a getUpdates to confirm its offset; the new request can be read before the
 * old connection's close, and that is no second instance. Telegram too answers a conflict late.
 */
const SUPERSEDED_POLL_GRACE_MS = 100;

async function readBytes(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** A file part of a multipart/form-data body (sendDocument). */
export interface UploadedFile {
  filename: string;
  content: Buffer;
  contentType?: string;
}

/** multipart/form-data as telegraf sends it: text fields as strings, file parts as UploadedFile. */
function parseMultipart(body: Buffer, boundary: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const delimiter = Buffer.from(`--${boundary}`);
  let start = body.indexOf(delimiter);
  while (start >= 0) {
    const partStart = start + delimiter.length;
    if (body.subarray(partStart, partStart + 2).toString() === '--') break;
    const next = body.indexOf(delimiter, partStart);
    if (next < 0) break;
    // Each part: CRLF, headers, CRLF CRLF, content, CRLF before the next delimiter.
    const part = body.subarray(partStart + 2, next - 2);
    const split = part.indexOf('\r\n\r\n');
    if (split >= 0) {
      const headers = part.subarray(0, split).toString('utf8');
      const content = part.subarray(split + 4);
      const name = /name="([^"]*)"/i.exec(headers)?.[1];
      const filename = /filename="([^"]*)"/i.exec(headers)?.[1];
      const contentType = /content-type:\s*([^\r\n]+)/i.exec(headers)?.[1];
      if (name !== undefined)
        out[name] = filename !== undefined ? { filename, content: Buffer.from(content), contentType } : content.toString('utf8');
    }
    start = next;
  }
  return out;
}

async function readParams(req: IncomingMessage, url: URL): Promise<Record<string, unknown>> {
  const params: Record<string, unknown> = Object.fromEntries(url.searchParams);
  if (req.method === 'GET' || req.method === 'HEAD') return params;
  const bytes = await readBytes(req);
  if (bytes.length === 0) return params;
  const type = req.headers['content-type'] ?? '';
  const boundary = /^multipart\/form-data;.*boundary=("?)([^";]+)\1/i.exec(type)?.[2];
  if (boundary) return { ...params, ...parseMultipart(bytes, boundary) };
  const body = bytes.toString('utf8');
  if (type.includes('application/json')) {
    const parsed = JSON.parse(body) as Record<string, unknown>;
    return { ...params, ...parsed };
  }
  if (type.includes('application/x-www-form-urlencoded')) return { ...params, ...Object.fromEntries(new URLSearchParams(body)) };
  throw new ApiError(400, 'Bad Request: unsupported content type');
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.writableEnded || res.destroyed) return;
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

/** A refused control call: its HTTP status and what was wrong, in one line. */
class ControlError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const FAULT_KINDS: FaultKind[] = ['retry_after', 'server_error', 'hang', 'bad_request'];

/** A control call's body: a JSON object sent as application/json, or nothing at all. */
async function readControlBody(req: IncomingMessage): Promise<Record<string, unknown>> {
  const bytes = await readBytes(req);
  if (bytes.length === 0) return {};
  const type = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
  if (type !== 'application/json') {
    throw new ControlError(
      415,
      `send the body as JSON with Content-Type: application/json (got ${type ? `"${type}"` : 'no Content-Type'})`,
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(bytes.toString('utf8'));
  } catch (err) {
    throw new ControlError(400, `the body is not JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new ControlError(400, 'the body must be a JSON object');
  return parsed as Record<string, unknown>;
}

/** The fields of a control body, each read as what it must be: a wrong or missing one is a 400 naming it. */
class ControlBody {
  constructor(private readonly fields: Record<string, unknown>) {}

  private has(name: string): boolean {
    const v = this.fields[name];
    return v !== undefined && v !== null && v !== '';
  }

  /** A whole number, given as a number or as a string of digits (the page's form values are strings). */
  int(name: string): number {
    const v = this.fields[name];
    const n = typeof v === 'number' ? v : typeof v === 'string' && /^-?\d+$/.test(v.trim()) ? Number(v) : NaN;
    if (!Number.isSafeInteger(n)) throw new ControlError(400, `"${name}" must be a whole number (got ${JSON.stringify(v) ?? 'nothing'})`);
    return n;
  }

  optionalInt(name: string): number | undefined {
    return this.has(name) ? this.int(name) : undefined;
  }

  string(name: string): string {
    const v = this.fields[name];
    if (typeof v !== 'string' && typeof v !== 'number')
      throw new ControlError(400, `"${name}" must be a string (got ${JSON.stringify(v) ?? 'nothing'})`);
    return String(v);
  }

  optionalString(name: string): string | undefined {
    return this.has(name) ? this.string(name) : undefined;
  }

  optionalBoolean(name: string): boolean | undefined {
    const v = this.fields[name];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'boolean') throw new ControlError(400, `"${name}" must be true or false (got ${JSON.stringify(v)})`);
    return v;
  }

  /** An object of true/false values (rights, permissions), or undefined. */
  flags(name: string): Record<string, boolean> | undefined {
    const v = this.fields[name];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'object' || Array.isArray(v) || Object.values(v).some((x) => typeof x !== 'boolean')) {
      throw new ControlError(400, `"${name}" must be an object of true/false values, like {"can_send_messages": false}`);
    }
    return v as Record<string, boolean>;
  }

  optionalUser(name: string): SandboxUser | undefined {
    const v = this.fields[name] as Partial<SandboxUser> | undefined | null;
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'object' || !Number.isSafeInteger(v.id) || typeof v.first_name !== 'string') {
      throw new ControlError(400, `"${name}" must be a Telegram user object with a numeric "id" and a "first_name"`);
    }
    return { is_bot: false, ...v } as SandboxUser;
  }

  /** A user, or DEFAULT_USER (the sandbox page's "you") when not given. */
  user(name: string): SandboxUser {
    return this.optionalUser(name) ?? DEFAULT_USER;
  }

  topics(name: string): { id?: number; name: string }[] | undefined {
    const v = this.fields[name];
    if (v === undefined || v === null) return undefined;
    if (!Array.isArray(v)) throw new ControlError(400, `"${name}" must be a list of topics like [{"name": "Заявки"}]`);
    return v.map((t: unknown, i) => {
      const topic = new ControlBody((t ?? {}) as Record<string, unknown>);
      try {
        return { id: topic.optionalInt('id'), name: topic.string('name') };
      } catch (err) {
        throw new ControlError(400, `"${name}" entry ${i + 1}: ${err instanceof Error ? err.message : String(err)}`);
      }
    });
  }

  /** The bot's membership in a new chat: `null` or absent (not in it), or `{ "status": …, "rights": {…} }`. */
  botMembership(name: string): SandboxChat['bot'] {
    const v = this.fields[name];
    if (v === undefined || v === null) return null;
    const bot = new ControlBody(v as Record<string, unknown>);
    if (typeof v !== 'object' || Array.isArray(v)) throw new ControlError(400, `"${name}" must be null or {"status": "member"}`);
    const status = bot.string('status') as MemberStatus;
    if (!MEMBER_STATUSES.includes(status)) throw new ControlError(400, `"${name}.status" must be one of ${MEMBER_STATUSES.join(', ')}`);
    return { status, rights: bot.flags('rights') };
  }
}

/** A local Telegram Bot API server: the methods this project calls, strict where Telegram is, with faults on demand. */
export class TelegramSandbox {
  readonly state: SandboxState;
  readonly token: string;
  /** The captcha providers' stand-in under `/captcha/` (captcha.ts). */
  readonly captcha = new CaptchaStandIn();
  private server: Server | null = null;
  private webhookSender: WebhookSender | null = null;
  private readonly hanging = new Set<ServerResponse>();
  private readonly maxPollSeconds: number;
  private readonly options: SandboxOptions;
  url = '';

  constructor(options: SandboxOptions = {}) {
    this.options = options;
    this.token = options.token ?? DEFAULT_TOKEN;
    this.state = new SandboxState(options.chats, options.firstMessageId);
    this.maxPollSeconds = options.maxPollSeconds ?? 50;
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      this.handle(req, res).catch((err: unknown) => {
        const e = err instanceof ApiError ? err : new ApiError(500, `Internal Server Error: ${String(err)}`);
        send(res, e.code, { ok: false, error_code: e.code, description: e.description });
      });
    });
    this.server.keepAliveTimeout = 65_000;
    await new Promise<void>((resolve) => this.server!.listen(this.options.port ?? 0, this.options.host ?? '127.0.0.1', resolve));
    const { port } = this.server.address() as AddressInfo;
    this.url = `http://${this.options.host ?? '127.0.0.1'}:${port}`;
    this.webhookSender = new WebhookSender(this.state, {
      timeoutMs: this.options.webhookTimeoutMs ?? 10_000,
      retryMs: this.options.webhookRetryMs ?? 1000,
      reply: (method, params) => this.replyCall(method, params),
    });
    return this;
  }

  async stop(): Promise<void> {
    this.webhookSender?.close();
    this.webhookSender = null;
    this.captcha.releaseHanging();
    for (const res of this.hanging) res.destroy();
    this.hanging.clear();
    this.state.emit('update');
    this.state.emit('close');
    if (!this.server) return;
    const server = this.server;
    this.server = null;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Answers the next `count` calls of `method` ("*": any but getUpdates) with a fault. */
  inject(fault: Omit<Fault, 'remaining'> & { count?: number }): void {
    const { count, ...rest } = fault;
    this.state.faults.push({ ...rest, remaining: count ?? 1 });
  }

  clearFaults(): void {
    this.state.faults = [];
  }

  /** Lets every call held by a `hang` fault go: each gets a 502, as a proxy in front of Telegram would give. */
  releaseHanging(): void {
    for (const res of this.hanging) send(res, 502, { ok: false, error_code: 502, description: 'Bad Gateway' });
    this.hanging.clear();
  }

  /** A group member presses an inline button: the bot gets a callback_query update. */
  press(chatId: number, messageId: number, data: string, from: SandboxUser = DEFAULT_USER): string {
    const msg = this.state.message(chatId, messageId);
    if (!msg) throw new Error(`no message ${messageId} in chat ${chatId}`);
    const id = randomUUID().replace(/-/g, '').slice(0, 16);
    this.state.join(chatId, from);
    this.state.pendingCallbacks.set(id, { chat_id: chatId, message_id: messageId, data });
    this.state.pushUpdate({
      callback_query: { id, from, message: presentMessage(this.state, msg), chat_instance: String(chatId), data },
    });
    return id;
  }

  /**
   * A member writes in a chat (a command, say), in a forum topic when `threadId` is given. The message is in the chat
   * either way; the bot gets it as an update only as Telegram would send it: when the bot is in the chat and, with
   * privacy mode on (as BotFather sets it; getMe's `can_read_all_group_messages` is false), the bot is an administrator,
   * or the message is a command not addressed to another bot, or a reply to one of the bot's messages.
   */
  say(chatId: number, text: string, from: SandboxUser = DEFAULT_USER, threadId?: number, extra: SayExtras = {}): number {
    const chat = this.state.chats.get(chatId);
    if (!chat) throw new Error(`no chat ${chatId}`);
    if (threadId !== undefined && !this.state.topic(chatId, threadId)) throw new Error(`no topic ${threadId} in chat ${chatId}`);
    const replyTo = extra.reply_to_message_id;
    const replied = replyTo !== undefined ? this.state.message(chatId, replyTo) : undefined;
    if (replyTo !== undefined && !replied) throw new Error(`no message ${replyTo} in chat ${chatId}`);
    const media = extra.photo || extra.document || extra.voice;
    if (!media && text === '') throw new Error('"text" is empty (only a photo, a document or a voice message may have none)');
    this.state.join(chatId, from);
    const command = media ? null : /^\/[A-Za-z0-9_]+(@[A-Za-z0-9_]+)?/.exec(text);
    const entities = command ? [{ type: 'bot_command', offset: 0, length: command[0].length }] : [];
    const fileId = (kind: string) => `${kind}-${randomUUID().replace(/-/g, '').slice(0, 12)}`;
    const msg = this.state.addMessage({
      chat_id: chatId,
      date: Math.floor(Date.now() / 1000),
      from,
      text,
      entities,
      // A reply lands in the topic of the message it replies to, as in Telegram.
      ...(threadId !== undefined
        ? { message_thread_id: threadId }
        : replied?.message_thread_id !== undefined
          ? { message_thread_id: replied.message_thread_id }
          : {}),
      ...(replyTo !== undefined ? { reply_to_message_id: replyTo } : {}),
      ...(extra.photo
        ? { photo: [{ file_id: fileId('photo'), file_unique_id: fileId('u'), width: 800, height: 600, file_size: 48_000 }] }
        : {}),
      ...(extra.document
        ? { document: { file_id: fileId('doc'), file_name: 'document.pdf', file_size: 12_000, mime_type: 'application/pdf' } }
        : {}),
      ...(extra.voice ? { voice: { file_id: fileId('voice'), duration: 3 } } : {}),
    });
    const forThisBot = command !== null && (command[1] === undefined || command[1].slice(1).toLowerCase() === BOT_USER.username);
    const toTheBot = replied?.from.id === BOT_USER.id;
    if (this.state.botIsIn(chatId) && (forThisBot || toTheBot || this.botReadsEverything(chatId))) {
      this.state.pushUpdate({ message: presentMessage(this.state, msg) });
    }
    return msg.message_id;
  }

  /** Privacy mode does not apply to an administrator (nor to a private chat). */
  private botReadsEverything(chatId: number): boolean {
    const status = this.state.member(chatId, BOT_USER.id)?.status;
    return this.state.chats.get(chatId)?.type === 'private' || status === 'administrator' || status === 'creator';
  }

  /**
   * A chat the tests or the page add: a group the bot is not in unless `bot` says so (`{ status: 'member' }`), with
   * its topics when it is a forum. Its id is given or the next free one below the default chats'.
   */
  addChat(chat: Omit<SandboxChat, 'id' | 'topics'> & { id?: number; topics?: { id?: number; name: string }[] }): SandboxChat {
    const id = chat.id ?? Math.min(-1001000000100, ...[...this.state.chats.keys()].map((k) => k - 1));
    if (!Number.isInteger(id) || id === 0) throw new Error('a chat id is a non-zero whole number, like -1001000000123');
    if (this.state.chats.has(id)) throw new Error(`chat ${id} exists`);
    if (!['supergroup', 'group', 'private'].includes(chat.type)) throw new Error('a chat type is supergroup, group or private');
    if (typeof chat.title !== 'string' || chat.title.trim() === '') throw new Error('a chat needs a title');
    if (chat.bot && !MEMBER_STATUSES.includes(chat.bot.status)) throw new Error(`unknown member status ${String(chat.bot.status)}`);
    if (chat.is_forum && chat.type !== 'supergroup') throw new Error('only a supergroup can be a forum');
    const { topics, ...rest } = chat;
    this.state.addChat({ ...rest, id, bot: chat.bot === undefined ? null : chat.bot, ...(chat.is_forum ? { is_forum: true } : {}) });
    for (const topic of topics ?? []) this.state.createTopic(id, topic.name, topic.id);
    // The topics are part of the chat as added: a reset brings them back.
    if (topics?.length) this.state.remember(id);
    this.state.changed();
    return this.state.chats.get(id)!;
  }

  /** The group is upgraded: sends to `oldId` answer 400 with migrate_to_chat_id, and `newId` is a chat. */
  migrateChat(oldId: number, newId: number): void {
    const chat = this.state.chats.get(oldId);
    if (!chat) throw new Error(`no chat ${oldId}`);
    this.state.addChat({ ...chat, id: newId, migratedTo: undefined });
    this.state.members.set(newId, new Map(this.state.members.get(oldId)));
    chat.migratedTo = newId;
    this.state.changed();
  }

  /**
   * A topic in a supergroup, which becomes a forum (`is_forum`). Its id is the chat's next message id, or
   * `id` when given. Returns the topic's `message_thread_id`.
   */
  createTopic(chatId: number, name: string, id?: number): number {
    return this.state.createTopic(chatId, name, id);
  }

  /** Closes a topic: Telegram then refuses new messages there with "Bad Request: TOPIC_CLOSED". */
  closeTopic(chatId: number, threadId: number): void {
    this.state.setTopic(chatId, threadId, 'close');
  }

  reopenTopic(chatId: number, threadId: number): void {
    this.state.setTopic(chatId, threadId, 'reopen');
  }

  /** Deletes a topic and its messages: Telegram then answers "Bad Request: message thread not found". */
  deleteTopic(chatId: number, threadId: number): void {
    this.state.setTopic(chatId, threadId, 'delete');
  }

  /** The messages of one topic of a chat; `null`: those outside every topic (a forum's General topic). */
  topicMessages(chatId: number, threadId: number | null) {
    return this.messages(chatId).filter((m) => (m.message_thread_id ?? null) === threadId);
  }

  /**
   * Gives a user a status in a chat, as the group's owner would in Telegram: `administrator` to promote,
   * `member` to demote, `restricted` (with `rights` such as `{ can_send_messages: true }`), `left` or `kicked` to
   * remove. Unknown statuses are refused. The bot's own change reaches it as Telegram sends it: a `my_chat_member`
   * update, from `by` (the user who added, promoted or removed it).
   */
  setMember(chatId: number, user: SandboxUser, status: MemberStatus, rights?: MemberRights, by: SandboxUser = DEFAULT_USER): void {
    if (!MEMBER_STATUSES.includes(status)) throw new Error(`unknown member status ${String(status)}`);
    const chat = this.state.chats.get(chatId);
    if (!chat) throw new Error(`no chat ${chatId}`);
    const before = this.state.member(chatId, user.id) ?? { user, status: 'left' as const };
    this.state.setMember(chatId, user, status, rights);
    if (user.id !== BOT_USER.id) return;
    this.state.pushUpdate({
      my_chat_member: {
        chat: presentChat(chat),
        from: by,
        date: Math.floor(Date.now() / 1000),
        old_chat_member: presentMember(before, chat),
        new_chat_member: presentMember(this.state.member(chatId, user.id)!, chat),
      },
    });
  }

  /** The bot is added to a group (or promoted, restricted, removed) by `by`: see setMember. */
  addBot(chatId: number, status: MemberStatus = 'member', rights?: MemberRights, by: SandboxUser = DEFAULT_USER): void {
    this.setMember(chatId, BOT_USER, status, rights, by);
  }

  messages(chatId: number) {
    return this.state.messages.get(chatId) ?? [];
  }

  callsOf(method: string) {
    return this.state.calls.filter((c) => c.method === method);
  }

  /** Every attempt to deliver an update to the webhook, oldest first (the last 1000). */
  get webhookDeliveries(): WebhookDelivery[] {
    return this.state.webhookDeliveries;
  }

  /** Every getUpdates long poll since the start (or the last reset), oldest first. */
  get polls(): Poll[] {
    return this.state.polls;
  }

  /** How many getUpdates polls a newer one ended: 0 unless two pollers overlapped, as two bot instances would. */
  get pollConflicts(): number {
    return this.state.pollConflicts;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://sandbox');
    const bot = /^\/bot([^/]+)\/([A-Za-z]+)$/.exec(url.pathname);
    if (bot) return this.handleBotApi(bot[1], bot[2], req, res, url);
    if (url.pathname.startsWith('/sandbox/api/')) return this.handleControl(url.pathname.slice('/sandbox/api/'.length), req, res);
    if (url.pathname.startsWith('/captcha/')) return this.captcha.handle(req, res, url);
    if (url.pathname.startsWith(BOT_LINK_PATH)) return openBotLink(this, req, res, url);
    const file = /^\/sandbox\/files\/([\w-]+)$/.exec(url.pathname);
    if (file && req.method === 'GET') {
      // A photo the bot sent, for the page's <img>.
      const photo = this.state.photos.get(file[1]);
      if (!photo) return send(res, 404, { ok: false, error_code: 404, description: 'Not Found: no such file' });
      res.writeHead(200, { 'Content-Type': photo.mimeType, 'Content-Length': photo.content.length, 'Cache-Control': 'no-store' });
      res.end(photo.content);
      return;
    }
    if (url.pathname === '/' && req.method === 'GET') {
      const html = renderPage({ inbox: Boolean(this.options.inboxUrl) });
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store' });
      res.end(html);
      return;
    }
    send(res, 404, { ok: false, error_code: 404, description: 'Not Found' });
  }

  private async handleBotApi(token: string, method: string, req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    if (token !== this.token) return send(res, 401, { ok: false, error_code: 401, description: 'Unauthorized' });
    let params: Record<string, unknown>;
    try {
      params = await readParams(req, url);
    } catch (err) {
      const e = err instanceof ApiError ? err : new ApiError(400, "Bad Request: can't parse JSON");
      return send(res, e.code, { ok: false, error_code: e.code, description: e.description });
    }
    const call: ApiCall = { method, params, at: Date.now(), status: 0 };
    if (method !== 'getUpdates') this.state.calls.push(call);

    const fault = this.state.takeFault(method, params);
    if (fault) {
      if (fault.kind === 'hang') {
        this.hanging.add(res);
        res.on('close', () => this.hanging.delete(res));
        return;
      }
      const answer: ApiAnswer =
        fault.kind === 'retry_after'
          ? {
              ok: false,
              error_code: 429,
              description: `Too Many Requests: retry after ${fault.retry_after ?? 5}`,
              parameters: { retry_after: fault.retry_after ?? 5 },
            }
          : fault.kind === 'server_error'
            ? { ok: false, error_code: fault.status ?? 500, description: fault.description ?? 'Internal Server Error' }
            : { ok: false, error_code: 400, description: fault.description ?? 'Bad Request' };
      call.status = answer.error_code;
      call.description = answer.description;
      return send(res, answer.error_code, answer);
    }

    if (method === 'getUpdates') return this.getUpdates(params, res);
    const answer = this.invoke(call);
    send(res, answer.ok ? 200 : answer.error_code, answer);
  }

  /** Runs a recorded call on the state; notes its status on the call and gives Telegram's answer. */
  private invoke(call: ApiCall): ApiAnswer {
    const handler = METHODS[call.method];
    if (!handler) {
      call.status = 404;
      return { ok: false, error_code: 404, description: 'Not Found: method not found' };
    }
    try {
      const result = handler(this.state, call.params);
      call.status = 200;
      return { ok: true, result };
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      call.status = err.code;
      call.description = err.description;
      const body: ApiAnswer = { ok: false, error_code: err.code, description: err.description };
      if (err.parameters) body.parameters = err.parameters;
      return body;
    }
  }

  /** A call the bot made in its answer to a webhook delivery. Telegram tells nobody how it went; `calls` does. */
  private replyCall(method: string, params: Record<string, unknown>): void {
    const call: ApiCall = { method, params, at: Date.now(), status: 0, via: 'webhook' };
    this.state.calls.push(call);
    // A handler's bug answers 500 over HTTP; here it must not escape into the delivery loop.
    try {
      this.invoke(call);
    } catch (err) {
      call.status = 500;
      call.description = `Internal Server Error: ${String(err)}`;
    }
  }

  /**
   * Long polling as Telegram does it: answers at once when updates wait, else when one arrives or `timeout` passes.
   * Refused while a webhook is set. One poll waits at a time: a newer one (a second bot instance) ends the waiting one
   * with 409, and so does setWebhook.
   */
  private getUpdates(params: Record<string, unknown>, res: ServerResponse): void {
    const offset = Number(params.offset ?? 0);
    const limit = Math.min(100, Math.max(1, Number(params.limit ?? 100)));
    const timeout = Math.min(this.maxPollSeconds, Math.max(0, Number(params.timeout ?? 0)));
    const poll: Poll = { at: Date.now(), offset, timeout, status: 0 };
    this.state.polls.push(poll);
    const reply = (answer: ApiAnswer) => {
      if (res.destroyed || res.writableEnded) return;
      const status = answer.ok ? 200 : answer.error_code;
      poll.status = status;
      if (answer.ok) poll.updates = (answer.result as unknown[]).length;
      else poll.description = answer.description;
      send(res, status, answer);
    };
    if (this.state.webhook) return reply(conflict(WEBHOOK_ACTIVE));
    this.state.emit('poll');

    if (offset > 0) this.state.updates = this.state.updates.filter((u) => u.update_id >= offset);
    const updates = (): ApiAnswer => ({ ok: true, result: this.state.updates.slice(0, limit) });
    if (this.state.updates.length > 0 || timeout === 0) return reply(updates());

    const finish = (answer: ApiAnswer) => {
      cleanup();
      reply(answer);
    };
    const onUpdate = () => {
      if (this.state.updates.length > 0 || !this.server) finish(updates());
    };
    let grace: NodeJS.Timeout | undefined;
    const onPoll = () => {
      cleanup();
      grace = setTimeout(() => {
        if (res.destroyed) return;
        this.state.pollConflicts += 1;
        reply(conflict(TERMINATED_BY_POLL));
      }, SUPERSEDED_POLL_GRACE_MS);
    };
    const onWebhook = () => {
      if (this.state.webhook) finish(conflict(TERMINATED_BY_WEBHOOK));
    };
    const timer = setTimeout(() => finish(updates()), timeout * 1000);
    const cleanup = () => {
      clearTimeout(timer);
      this.state.off('update', onUpdate);
      this.state.off('poll', onPoll);
      this.state.off('webhook', onWebhook);
    };
    // The response's close, not the request's: that one fires as soon as the body has been read.
    res.on('close', () => {
      cleanup();
      clearTimeout(grace);
      if (poll.status === 0) poll.description = 'the bot hung up before the answer';
    });
    this.state.on('update', onUpdate);
    this.state.on('poll', onPoll);
    this.state.on('webhook', onWebhook);
  }

  /**
   * The control API (tests, the page, a developer's curl): a POST body is a JSON object sent as `application/json`
   * (415 otherwise: a form-encoded body would be read as nothing and turn every number into NaN), each field checked
   * where it is used; a bad one is a 400 naming it. A POST without a body is an empty object.
   */
  private async handleControl(path: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
    let body: ControlBody;
    try {
      body = req.method === 'POST' ? new ControlBody(await readControlBody(req)) : new ControlBody({});
    } catch (err) {
      if (!(err instanceof ControlError)) throw err;
      return send(res, err.status, { error: err.message });
    }
    try {
      switch (`${req.method} ${path}`) {
        case 'GET state':
          // The page's snapshot, with the logs the page has no use for.
          return send(res, 200, {
            ...this.state.snapshot(),
            webhookDeliveries: this.state.webhookDeliveries,
            polls: this.state.polls,
          });
        case 'GET inbox': {
          // A launch signed now: the link on the page stays usable however long the page has been open.
          if (!this.options.inboxUrl) throw new ControlError(404, 'the sandbox does not know the inbox (SANDBOX_INBOX_URL)');
          const userId = Number(new URL(req.url ?? '/', 'http://sandbox').searchParams.get('user_id') ?? DEFAULT_USER.id);
          const user = userId === DEFAULT_USER.id ? DEFAULT_USER : this.state.knownUser(userId);
          if (!user || user.is_bot) throw new ControlError(404, `the sandbox knows no user ${userId}`);
          res.writeHead(302, {
            Location: launchUrl(this.options.inboxUrl, signInitData({ botToken: this.token, user })),
            'Cache-Control': 'no-store',
          });
          res.end();
          return;
        }
        case 'GET calls':
          return send(res, 200, this.state.calls);
        case 'GET events':
          return this.events(req, res);
        case 'POST press':
          return send(res, 200, {
            callback_query_id: this.press(body.int('chat_id'), body.int('message_id'), body.string('data'), body.user('from')),
          });
        case 'POST say':
          return send(res, 200, {
            message_id: this.say(body.int('chat_id'), body.optionalString('text') ?? '', body.user('from'), body.optionalInt('thread_id'), {
              reply_to_message_id: body.optionalInt('reply_to_message_id'),
              photo: body.optionalBoolean('photo'),
              document: body.optionalBoolean('document'),
              voice: body.optionalBoolean('voice'),
            }),
          });
        case 'POST chats': {
          const chat = this.addChat({
            id: body.optionalInt('id'),
            title: body.string('title'),
            type: (body.optionalString('type') ?? 'supergroup') as SandboxChat['type'],
            is_forum: body.optionalBoolean('is_forum'),
            topics: body.topics('topics'),
            permissions: body.flags('permissions'),
            bot: body.botMembership('bot'),
          });
          return send(res, 200, { chat });
        }
        case 'POST topics':
          return send(res, 200, {
            message_thread_id: this.createTopic(body.int('chat_id'), body.string('name'), body.optionalInt('thread_id')),
          });
        case 'POST topics/close':
        case 'POST topics/reopen':
        case 'POST topics/delete': {
          const change = path.slice('topics/'.length) as 'close' | 'reopen' | 'delete';
          const chatId = body.int('chat_id');
          this.state.setTopic(chatId, body.int('thread_id'), change);
          return send(res, 200, { topics: this.state.chats.get(chatId)?.topics ?? [] });
        }
        case 'POST faults': {
          const kind = body.string('kind');
          if (!FAULT_KINDS.includes(kind as FaultKind)) throw new ControlError(400, `"kind" must be one of ${FAULT_KINDS.join(', ')}`);
          this.inject({
            method: body.optionalString('method') ?? '*',
            kind: kind as FaultKind,
            count: body.optionalInt('count') ?? 1,
            retry_after: body.optionalInt('retry_after'),
            status: body.optionalInt('status'),
            description: body.optionalString('description'),
            chat_id: body.optionalInt('chat_id'),
          });
          return send(res, 200, { faults: this.state.faults });
        }
        case 'POST faults/clear':
          this.clearFaults();
          this.releaseHanging();
          return send(res, 200, { faults: [] });
        case 'POST members': {
          const chatId = body.int('chat_id');
          const given = body.optionalUser('user');
          const userId = given ? undefined : body.int('user_id');
          const user = given ?? (userId === BOT_USER.id ? BOT_USER : this.state.knownUser(userId!));
          if (!user) throw new ControlError(400, 'give "user" (a Telegram user object) or the "user_id" of a user the sandbox has seen');
          this.setMember(chatId, user, body.string('status') as MemberStatus, body.flags('rights'), body.user('from'));
          return send(res, 200, { members: [...(this.state.members.get(chatId)?.values() ?? [])] });
        }
        case 'POST migrate':
          this.migrateChat(body.int('chat_id'), body.int('new_chat_id'));
          return send(res, 200, { ok: true });
        case 'POST block':
        case 'POST unblock': {
          const userId = body.int('user_id');
          if (path === 'block') this.state.blocked.add(userId);
          else this.state.blocked.delete(userId);
          this.state.changed();
          return send(res, 200, { blocked: [...this.state.blocked] });
        }
        case 'POST reset':
          this.state.reset();
          return send(res, 200, { ok: true });
        default:
          return send(res, 404, { error: 'unknown sandbox call' });
      }
    } catch (err) {
      return send(res, err instanceof ControlError ? err.status : 400, { error: err instanceof Error ? err.message : String(err) });
    }
  }

  /** Server-sent events: the page redraws when anything changes. */
  private events(req: IncomingMessage, res: ServerResponse): void {
    res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-store', Connection: 'keep-alive' });
    const push = () => res.write(`data: ${JSON.stringify(this.state.snapshot())}\n\n`);
    push();
    this.state.on('change', push);
    const close = () => {
      this.state.off('change', push);
      res.end();
    };
    req.on('close', close);
    this.state.once('close', close);
  }
}

export async function startSandbox(options: SandboxOptions = {}): Promise<TelegramSandbox> {
  return new TelegramSandbox(options).start();
}
