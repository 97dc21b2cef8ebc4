import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TelegramSandbox } from './server';
import { BOT_USER, type SandboxUser } from './state';

/** Where the sandbox stands in for t.me: `<sandbox>/sandbox/t.me/<bot username>?start=<payload>`. */
export const BOT_LINK_PATH = '/sandbox/t.me/';

/** The visitor who opens a bot link unless `?user_id=` names another: someone who has just sent the landing's form. */
export const DEFAULT_VISITOR: SandboxUser = {
  id: 7000001,
  is_bot: false,
  first_name: 'Анна',
  last_name: 'Visitor',
  username: 'anna_visitor',
};

/** Telegram's rule for a start parameter: 1–64 of `A–Z a–z 0–9 _ -`. */
const START_PARAMETER = /^[A-Za-z0-9_-]{1,64}$/;

function line(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store' });
  res.end(`${text}\n`);
}

/** A user the sandbox has seen: a member of a chat, or the author of a message (a private chat has no roster). */
function seenUser(sandbox: TelegramSandbox, id: number): SandboxUser | undefined {
  if (id === DEFAULT_VISITOR.id) return DEFAULT_VISITOR;
  const member = sandbox.state.knownUser(id);
  if (member) return member;
  for (const messages of sandbox.state.messages.values()) {
    const from = messages.find((m) => m.from.id === id)?.from;
    if (from) return from;
  }
  return undefined;
}

/**
 * A visitor opens a bot link (`/sandbox/t.me/<bot>?start=<payload>`), as Telegram does when someone taps a t.me link
 * and presses Start: the visitor (DEFAULT_VISITOR, or `?user_id=` of a user the sandbox has seen) gets a private chat
 * with the bot if they had none, says `/start <payload>` there (`/start` alone without a payload) through the same
 * `say` as the control API, and is sent to the sandbox page with that chat in view (`/?chat=<id>`). Another bot's
 * username, an unknown user or a malformed payload: one line, 404 or 400. A message link (`c/<id>/<message>`) is
 * openMessageLink's.
 */
export function openBotLink(sandbox: TelegramSandbox, req: IncomingMessage, res: ServerResponse, url: URL): void {
  if (req.method !== 'GET' && req.method !== 'HEAD') return line(res, 405, 'a bot link is opened with GET');
  const bot = url.pathname.slice(BOT_LINK_PATH.length).replace(/\/$/, '');
  const message = /^c\/(\d{1,15})\/(?:\d{1,10}\/)?(\d{1,10})$/.exec(bot);
  if (message) return openMessageLink(sandbox, res, Number(`-100${message[1]}`), Number(message[2]));
  if (bot.toLowerCase() !== BOT_USER.username!.toLowerCase()) {
    return line(res, 404, `no bot @${bot} in the sandbox: its bot is @${BOT_USER.username}`);
  }
  const start = url.searchParams.get('start');
  if (start !== null && !START_PARAMETER.test(start)) {
    return line(res, 400, 'a start parameter is 1–64 characters of A–Z a–z 0–9 _ -');
  }
  const userId = url.searchParams.get('user_id');
  const user = userId === null ? DEFAULT_VISITOR : /^\d{1,15}$/.test(userId) ? seenUser(sandbox, Number(userId)) : undefined;
  if (!user || user.is_bot) return line(res, 404, `the sandbox knows no user ${userId}`);

  // A private chat's id is the user's id, as in Telegram.
  if (!sandbox.state.chats.has(user.id)) {
    sandbox.addChat({ id: user.id, type: 'private', title: [user.first_name, user.last_name].filter(Boolean).join(' ') });
  }
  sandbox.say(user.id, start === null ? '/start' : `/start ${start}`, user);
  res.writeHead(302, { Location: `/?chat=${user.id}`, 'Cache-Control': 'no-store' });
  res.end();
}

/**
 * A message link of a supergroup (`/sandbox/t.me/c/<id without -100>/[<topic>/]<message>`, as the inbox links a card):
 * the sandbox page with that chat in view and the message marked (`/?chat=<id>&message=<id>`). A message the sandbox
 * does not hold: one line, 404.
 */
function openMessageLink(sandbox: TelegramSandbox, res: ServerResponse, chatId: number, messageId: number): void {
  if (!sandbox.state.message(chatId, messageId)) return line(res, 404, `the sandbox holds no message ${messageId} in chat ${chatId}`);
  res.writeHead(302, { Location: `/?chat=${chatId}&message=${messageId}`, 'Cache-Control': 'no-store' });
  res.end();
}
