/**
 * Webhook mode, second hardening pass (both databases): an update Telegram delivers twice is handled once — after the
 * first was handled, while it is still being handled, and on another instance of the same database —, one left
 * unfinished by a dead instance is handled after the handling bound, and the memory is pruned after a day. A post
 * with a wrong secret is answered 401 and its connection closed after a bounded read of the rest of its body.
 */
import { connect } from 'node:net';
import { TelegramGateway } from '../src/telegram/telegram.gateway';
import { ADMIN_CHAT, freePort, memberActions, sandboxSuite, startServer, waitFor } from './harness';
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
