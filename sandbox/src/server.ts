import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApiError, METHODS, presentMessage, type ApiAnswer } from './bot-api';
import { renderPage } from './page';
import {
  type ApiCall,
  DEFAULT_USER,
  type Fault,
  type MemberStatus,
  type Poll,
  type SandboxChat,
  SandboxState,
  type SandboxUser,
  type WebhookDelivery,
} from './state';
import { WebhookSender } from './webhook';

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
}

export const DEFAULT_TOKEN = '123456789:sandbox-token';
export { DEFAULT_USER };
const MEMBER_STATUSES: MemberStatus[] = ['creator', 'administrator', 'member', 'restricted', 'left', 'kicked'];
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

/** A local Telegram Bot API server: the methods this project calls, strict where Telegram is, with faults on demand. */
export class TelegramSandbox {
  readonly state: SandboxState;
  readonly token: string;
  private server: Server | null = null;
  private webhookSender: WebhookSender | null = null;
  private readonly hanging = new Set<ServerResponse>();
  private readonly maxPollSeconds: number;
  private readonly options: SandboxOptions;
  url = '';

  constructor(options: SandboxOptions = {}) {
    this.options = options;
    this.token = options.token ?? DEFAULT_TOKEN;
    this.state = new SandboxState(options.chats);
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

  /** A member writes in a chat (a command, say), in a forum topic when `threadId` is given: the bot gets a message update. */
  say(chatId: number, text: string, from: SandboxUser = DEFAULT_USER, threadId?: number): number {
    const chat = this.state.chats.get(chatId);
    if (!chat) throw new Error(`no chat ${chatId}`);
    if (threadId !== undefined && !this.state.topic(chatId, threadId)) throw new Error(`no topic ${threadId} in chat ${chatId}`);
    this.state.join(chatId, from);
    const command = /^\/[A-Za-z0-9_]+(@[A-Za-z0-9_]+)?/.exec(text);
    const entities = command ? [{ type: 'bot_command', offset: 0, length: command[0].length }] : [];
    const msg = this.state.addMessage({
      chat_id: chatId,
      date: Math.floor(Date.now() / 1000),
      from,
      text,
      entities,
      ...(threadId !== undefined ? { message_thread_id: threadId } : {}),
    });
    this.state.pushUpdate({ message: presentMessage(this.state, msg) });
    return msg.message_id;
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
   * Issue 14: a topic in a supergroup, which becomes a forum (`is_forum`). Its id is the chat's next message id, or
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
   * `member` to demote, `left` or `kicked` to remove. Unknown statuses are refused.
   */
  setMember(chatId: number, user: SandboxUser, status: MemberStatus): void {
    if (!MEMBER_STATUSES.includes(status)) throw new Error(`unknown member status ${String(status)}`);
    this.state.setMember(chatId, user, status);
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
    if (url.pathname.startsWith('/sandbox/api/')) return this.handleControl(url.pathname.slice('/sandbox/api/'.length), req, res, url);
    if (url.pathname === '/' && req.method === 'GET') {
      const html = renderPage();
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

  // The control API's body is loose JSON from tests and the page; each field is converted where it is used.
  /* eslint-disable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-argument, @typescript-eslint/no-unsafe-assignment */
  private async handleControl(path: string, req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const body = req.method === 'POST' ? ((await readParams(req, url)) as Record<string, any>) : {};
    try {
      switch (`${req.method} ${path}`) {
        case 'GET state':
          // The page's snapshot, with the logs the page has no use for.
          return send(res, 200, {
            ...this.state.snapshot(),
            webhookDeliveries: this.state.webhookDeliveries,
            polls: this.state.polls,
          });
        case 'GET calls':
          return send(res, 200, this.state.calls);
        case 'GET events':
          return this.events(req, res);
        case 'POST press':
          return send(res, 200, {
            callback_query_id: this.press(Number(body.chat_id), Number(body.message_id), String(body.data), body.from ?? DEFAULT_USER),
          });
        case 'POST say': {
          const threadId = body.thread_id !== undefined && body.thread_id !== '' ? Number(body.thread_id) : undefined;
          return send(res, 200, { message_id: this.say(Number(body.chat_id), String(body.text), body.from ?? DEFAULT_USER, threadId) });
        }
        case 'POST topics': {
          const id = body.thread_id !== undefined ? Number(body.thread_id) : undefined;
          return send(res, 200, { message_thread_id: this.createTopic(Number(body.chat_id), String(body.name ?? ''), id) });
        }
        case 'POST topics/close':
        case 'POST topics/reopen':
        case 'POST topics/delete': {
          const change = path.slice('topics/'.length) as 'close' | 'reopen' | 'delete';
          this.state.setTopic(Number(body.chat_id), Number(body.thread_id), change);
          return send(res, 200, { topics: this.state.chats.get(Number(body.chat_id))?.topics ?? [] });
        }
        case 'POST faults':
          this.inject({
            method: String(body.method ?? '*'),
            kind: body.kind,
            count: body.count !== undefined ? Number(body.count) : 1,
            retry_after: body.retry_after !== undefined ? Number(body.retry_after) : undefined,
            status: body.status !== undefined ? Number(body.status) : undefined,
            description: body.description,
            chat_id: body.chat_id !== undefined ? Number(body.chat_id) : undefined,
          });
          return send(res, 200, { faults: this.state.faults });
        case 'POST faults/clear':
          this.clearFaults();
          this.releaseHanging();
          return send(res, 200, { faults: [] });
        case 'POST members': {
          const user: SandboxUser | undefined = body.user ?? this.state.knownUser(Number(body.user_id));
          if (!user) throw new Error('give "user" (a Telegram user object) or the "user_id" of a user the sandbox has seen');
          this.setMember(Number(body.chat_id), user, body.status);
          return send(res, 200, { members: [...(this.state.members.get(Number(body.chat_id))?.values() ?? [])] });
        }
        case 'POST migrate':
          this.migrateChat(Number(body.chat_id), Number(body.new_chat_id));
          return send(res, 200, { ok: true });
        case 'POST reset':
          this.state.reset();
          return send(res, 200, { ok: true });
        default:
          return send(res, 404, { error: 'unknown sandbox call' });
      }
    } catch (err) {
      return send(res, 400, { error: err instanceof Error ? err.message : String(err) });
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
