/**
 * Telegram's updates through the webhook route (both databases): with TELEGRAM_WEBHOOK_URL and TELEGRAM_WEBHOOK_SECRET
 * the server sets the webhook at start and takes the updates the sandbox posts to it, as Telegram does; nobody polls.
 * The route checks the secret header before anything else, and a post with a wrong secret is answered 401 with its
 * connection closed after a bounded read of the rest of its body. An update Telegram delivers twice is handled once —
 * after the first was handled, while it is still being handled, and on another instance of the same database —, one
 * left unfinished by a dead instance is handled after the handling bound, and the memory is pruned after a day. The
 * update is read with the bounded body reader POST /leads uses (server/src/http): one over its 1 MB limit is answered
 * 413 with the same lingering close, so a sender that keeps sending reads its 413 instead of a connection reset.
 */
import { connect } from 'node:net';
import { TELEGRAM_SECRET_HEADER } from '../src/bot/telegram-updates.controller';
import { ConfigError, loadServerConfig } from '../src/config/config';
import { TelegramGateway } from '../src/telegram/telegram.gateway';
import { ADMIN_CHAT, freePort, LEADS_CHAT, lead, memberActions, postLead, sandboxSuite, startServer, waitFor } from './harness';
import { sqlRows, sqlRun } from './support/test-database';

const SECRET_TOKEN = 'webhook-secret-0123456789_abc-XYZ';
const HOUR = 60 * 60 * 1000;
const { tmp, sandbox, start } = sandboxSuite();
const actions = memberActions(sandbox);
let n = 0;

type Update = { update_id: number; message?: { message_id: number } };

async function webhookServer(dbPath = `${tmp.dir}/tg-webhook2-${++n}.sqlite`, polling = true) {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/telegram/webhook`;
  const options = { dbPath, port, polling, env: { TELEGRAM_WEBHOOK_URL: url, TELEGRAM_WEBHOOK_SECRET: SECRET_TOKEN } };
  const server = polling ? await start(options) : await startServer({ sandbox, ...options });
  if (polling) await waitFor(() => sandbox.state.webhook?.url === url, 5000, 'setWebhook');
  // Every update the route hands to the bot, as it came.
  const handled = jest.spyOn(server.app.get(TelegramGateway), 'handleUpdate');
  return { server, url, dbPath, handled };
}

function post(url: string, update: unknown): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-Telegram-Bot-Api-Secret-Token': SECRET_TOKEN },
    body: JSON.stringify(update),
  });
}

/** The bot's replies to the member's message `messageId`. */
const repliesTo = (messageId: number) => sandbox.messages(ADMIN_CHAT).filter((m) => m.reply_to_message_id === messageId && m.from.is_bot);

/** A command through the sandbox's webhook delivery; the update the route handed to the bot. */
async function commandUpdate(handled: jest.SpyInstance): Promise<Update> {
  expect(await actions.command(ADMIN_CHAT, '/stickers_stats')).toContain('📊 Заявки');
  return handled.mock.calls[handled.mock.calls.length - 1][0] as Update;
}

interface RawUpload {
  response: string;
  sent: number;
  error: string | null;
}

/** Sends a chunked body of `total` bytes whatever the server answers, and reads the answer only once all is sent. */
function chunkedUpload(url: string, total: number): Promise<RawUpload> {
  const { hostname, port, pathname } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    const received: Buffer[] = [];
    let sent = 0;
    let error: string | null = null;
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    const frame = Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')]);
    socket.pause();
    socket.on('data', (d: Buffer) => received.push(d));
    socket.on('error', (err: NodeJS.ErrnoException) => (error = err.code ?? err.message));
    socket.on('close', () => resolve({ response: Buffer.concat(received).toString('latin1'), sent, error }));
    socket.on('connect', () => {
      const head = [
        `POST ${pathname} HTTP/1.1`,
        `Host: ${hostname}`,
        `${TELEGRAM_SECRET_HEADER}: ${SECRET_TOKEN}`,
        'Content-Type: application/json',
        'Transfer-Encoding: chunked',
      ];
      socket.write(`${head.join('\r\n')}\r\n\r\n`);
      const pump = () => {
        while (sent < total && !socket.destroyed) {
          sent += chunk.length;
          if (!socket.write(frame)) return void socket.once('drain', pump);
        }
        if (socket.destroyed) return;
        socket.write('0\r\n\r\n');
        socket.resume();
        socket.end();
      };
      pump();
    });
  });
}

describe('webhook mode', () => {
  it('sets the webhook at start with the secret and the update kinds, and never polls', async () => {
    const { url } = await webhookServer();
    expect(sandbox.state.webhook).toMatchObject({ url, secret_token: SECRET_TOKEN, allowed_updates: ['message', 'callback_query'] });
    expect(sandbox.state.polls).toHaveLength(0);
  });

  it('a press and a command reach the app through the webhook', async () => {
    const { server, url } = await webhookServer();
    const number = (await postLead(server, lead())).body.lead_number as number;
    await server.outbox.whenIdle();
    const card = sandbox.messages(LEADS_CHAT).find((m) => m.text.includes(`#${number}`))!;
    expect(await actions.press(LEADS_CHAT, card.message_id, `lead:${number}:new:in_progress`)).toBeTruthy();
    await waitFor(
      () => sandbox.messages(LEADS_CHAT).find((m) => m.message_id === card.message_id && m.text.includes('В работе')),
      5000,
      'the card rewritten',
    );
    expect(await actions.command(ADMIN_CHAT, '/stickers_stats')).toContain('📊 Заявки');
    // Both updates came by webhook and were answered 200 (after they were handled, so after the bot's replies).
    await waitFor(
      () => sandbox.webhookDeliveries.filter((d) => d.url === url && d.status === 200).length === 2,
      5000,
      'two deliveries taken',
    );
    expect(sandbox.state.polls).toHaveLength(0);
  });

  it('refuses a post without the secret header, or with a wrong one, with a bare 401, and handles nothing', async () => {
    const { url } = await webhookServer();
    const update = {
      update_id: 999_001,
      message: { message_id: 1, date: 0, chat: { id: ADMIN_CHAT, type: 'supergroup' }, text: '/stickers_stats' },
    };
    const variants: Record<string, string>[] = [
      {},
      { 'X-Telegram-Bot-Api-Secret-Token': 'wrong' },
      { 'X-Telegram-Bot-Api-Secret-Token': `${SECRET_TOKEN}x` },
    ];
    for (const headers of variants) {
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', ...headers },
        body: JSON.stringify(update),
      });
      expect(res.status).toBe(401);
      expect(await res.text()).toBe('');
    }
    const bad = await fetch(url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Telegram-Bot-Api-Secret-Token': SECRET_TOKEN },
      body: '{not json',
    });
    expect(bad.status).toBe(400);
    expect(sandbox.messages(ADMIN_CHAT).filter((m) => m.from.is_bot)).toHaveLength(0);
  });

  it('refuses half a webhook configuration at start, one line per problem', () => {
    const base = { LEADS_SECRET: 'x'.repeat(20), LEADS_IP_SALT: 'salt', TELEGRAM_BOT_TOKEN: '1:abc', LEADS_CHAT_ID: '-100' };
    const problems = (env: Record<string, string>) => {
      try {
        loadServerConfig({ ...base, ...env });
        return [];
      } catch (err) {
        return (err as ConfigError).problems;
      }
    };
    expect(problems({ TELEGRAM_WEBHOOK_URL: 'https://leads.example.com/tg' })).toEqual([
      'TELEGRAM_WEBHOOK_SECRET must be set with TELEGRAM_WEBHOOK_URL (anyone could post updates otherwise)',
    ]);
    expect(problems({ TELEGRAM_WEBHOOK_SECRET: SECRET_TOKEN })).toEqual([
      'TELEGRAM_WEBHOOK_SECRET is set but TELEGRAM_WEBHOOK_URL is not (set both for webhook mode, neither for polling)',
    ]);
    expect(problems({ TELEGRAM_WEBHOOK_URL: 'https://leads.example.com/tg', TELEGRAM_WEBHOOK_SECRET: 'short' })).toEqual([
      'TELEGRAM_WEBHOOK_SECRET must be 16–256 characters of A–Z, a–z, 0–9, _ and - (as Telegram allows)',
    ]);
    expect(problems({ TELEGRAM_WEBHOOK_URL: 'ftp://x', TELEGRAM_WEBHOOK_SECRET: SECRET_TOKEN })).toEqual([
      'TELEGRAM_WEBHOOK_URL must be the https URL Telegram posts updates to (got "ftp://x")',
    ]);
  });
});

describe('an update delivered twice is handled once', () => {
  it('after the first was handled: answered 200, not handled again', async () => {
    const { url, handled } = await webhookServer();
    const update = await commandUpdate(handled);
    const res = await post(url, update);
    expect(res.status).toBe(200);
    expect(handled).toHaveBeenCalledTimes(1);
    expect(repliesTo(update.message!.message_id)).toHaveLength(1);
  });

  it('while the first is still being handled: 503 (Telegram tries again), then 200 without a second handling', async () => {
    const { server, url, handled } = await webhookServer();
    const gateway = server.app.get(TelegramGateway);
    const original = (update: unknown) => TelegramGateway.prototype.handleUpdate.call(gateway, update);
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let first: Update | undefined;
    handled.mockImplementationOnce(async (update: unknown) => {
      first = update as Update;
      await gate;
      return original(update);
    });
    const messageId = sandbox.say(ADMIN_CHAT, '/stickers_stats');
    await waitFor(() => first, 5000, 'the first delivery being handled');
    // Telegram's second delivery of the same update (its first answer was slow).
    const again = await post(url, first);
    expect(again.status).toBe(503);
    release();
    await waitFor(() => repliesTo(messageId).length === 1, 5000, 'the reply');
    await waitFor(() => sandbox.webhookDeliveries.some((d) => d.update_id === first!.update_id && d.status === 200), 5000, '200');
    expect((await post(url, first)).status).toBe(200);
    expect(handled).toHaveBeenCalledTimes(1);
    expect(repliesTo(messageId)).toHaveLength(1);
  });

  it('on another instance of the same database', async () => {
    const a = await webhookServer();
    const update = await commandUpdate(a.handled);
    // A second instance (another port behind the same load balancer), on the same database.
    const b = await webhookServer(a.dbPath, false);
    try {
      expect((await post(b.url, update)).status).toBe(200);
      expect(b.handled).not.toHaveBeenCalled();
      expect(repliesTo(update.message!.message_id)).toHaveLength(1);
    } finally {
      await b.server.close();
    }
  });

  it('one left unfinished by an instance that died is handled once the handling bound has passed', async () => {
    const { server, url, handled } = await webhookServer();
    const seen = await commandUpdate(handled);
    // The same command again, as an update an instance took and then died with (no handled_at).
    const orphan = { ...seen, update_id: seen.update_id + 1000 };
    await sqlRun(
      server.db,
      'insert into telegram_updates (update_id, seen_at, handled_at) values (?, ?, null)',
      orphan.update_id,
      server.clock.now(),
    );
    expect((await post(url, orphan)).status).toBe(503);
    expect(handled).toHaveBeenCalledTimes(1);
    server.clock.advance(2 * 60 * 1000 + 1);
    expect((await post(url, orphan)).status).toBe(200);
    expect(handled).toHaveBeenCalledTimes(2);
    expect(repliesTo(seen.message!.message_id)).toHaveLength(2);
    expect((await post(url, orphan)).status).toBe(200);
    expect(handled).toHaveBeenCalledTimes(2);
  });

  it('is remembered for a day, then forgotten', async () => {
    const { server, handled } = await webhookServer();
    const first = await commandUpdate(handled);
    const ids = async () =>
      (await sqlRows<{ update_id: number }>(server.db, 'select update_id from telegram_updates order by update_id')).map(
        (r) => r.update_id,
      );
    expect(await ids()).toEqual([first.update_id]);
    server.clock.advance(25 * HOUR);
    const second = await commandUpdate(handled);
    expect(await ids()).toEqual([second.update_id]);
  });
});

describe('a post with a wrong secret', () => {
  it('is answered 401 with Connection: close, and the connection is closed after a bounded read of the body', async () => {
    const { url, handled } = await webhookServer();
    const { hostname, port, pathname } = new URL(url);
    const socket = connect(Number(port), hostname);
    let answer = '';
    let closed = false;
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => (answer += chunk));
    socket.on('error', () => undefined); // our writes after the server's close
    socket.on('close', () => (closed = true));
    // Announces 8 MB (an update is a few KB; the route reads at most 1 MB of one).
    socket.write(
      `POST ${pathname} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nContent-Type: application/json\r\n` +
        `X-Telegram-Bot-Api-Secret-Token: wrong-secret\r\nContent-Length: ${8 * 1024 * 1024}\r\n\r\n`,
    );
    await waitFor(() => answer.includes('\r\n\r\n'), 5000, 'the answer');
    expect(answer).toMatch(/^HTTP\/1\.1 401 /);
    expect(answer.toLowerCase()).toContain('connection: close');
    // More than the bound, then nothing: the server closes; it does not wait for the 8 MB or Node's request timeout.
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    for (let sent = 0; sent < 2 * 1024 * 1024 && !closed; sent += chunk.length) {
      if (!socket.write(chunk)) await new Promise((resolve) => socket.once('drain', resolve).once('close', resolve));
    }
    await waitFor(() => closed, 8000, 'the server closing the connection');
    expect(handled).not.toHaveBeenCalled();
  });
});

describe('the Telegram webhook on the shared body reader', () => {
  it('8 parallel chunked updates of 1.25 MB that keep sending all read their bare 413, with no connection reset', async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}/telegram/webhook`;
    await start({
      dbPath: `${tmp.dir}/webhook-413.sqlite`,
      port,
      polling: true,
      env: { TELEGRAM_WEBHOOK_URL: url, TELEGRAM_WEBHOOK_SECRET: SECRET_TOKEN },
    });
    await waitFor(() => sandbox.state.webhook, 5000, 'setWebhook');
    const total = 20 * 64 * 1024;
    const results = await Promise.all(Array.from({ length: 8 }, () => chunkedUpload(url, total)));
    for (const r of results) {
      expect(r.error).toBeNull();
      expect(r.sent).toBe(total);
      expect(r.response).toMatch(/^HTTP\/1\.1 413 /);
      expect(r.response).toContain('Connection: close');
    }
  });
});
