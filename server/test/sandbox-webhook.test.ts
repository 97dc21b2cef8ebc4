/** The sandbox's webhooks and getUpdates conflicts behave as Telegram's do, so a bot tested on them meets no surprise. */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DEFAULT_USER, startSandbox, type TelegramSandbox } from '@stickers/telegram-sandbox';
import { Telegraf } from 'telegraf';
import { waitFor } from './harness';

const CHAT = -1001000000001;
const SECRET = 'sandbox_SECRET-42';
const WEBHOOK_ACTIVE = "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first";

let sandbox: TelegramSandbox;
const receivers: Server[] = [];

async function call(method: string, params: Record<string, unknown> = {}) {
  const res = await fetch(`${sandbox.url}/bot${sandbox.token}/${method}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(params),
  });
  return { status: res.status, body: (await res.json()) as any };
}

interface Received {
  headers: IncomingHttpHeaders;
  body: any;
}

/**
 * A webhook on loopback: keeps every request and answers each with the next of `statuses` (the last one repeats);
 * `null` never answers. `closed` counts the requests the sandbox hung up on before an answer.
 */
async function receiver(...statuses: (number | null)[]) {
  const received: Received[] = [];
  const seen = { received, closed: 0 };
  const server = createServer((req, res) => {
    let text = '';
    req.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
    req.on('end', () => {
      received.push({ headers: req.headers, body: JSON.parse(text) });
      const status = statuses.length > 1 ? statuses.shift()! : statuses[0];
      if (status !== null) res.writeHead(status).end();
    });
    // Closed before an answer: the sandbox gave up on this request.
    res.on('close', () => {
      if (!res.writableEnded) seen.closed += 1;
    });
  });
  receivers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return Object.assign(seen, { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook` });
}

/** A lead card with one button, as the bot sends it; the tests press the button. */
async function card(): Promise<number> {
  const sent = await call('sendMessage', {
    chat_id: CHAT,
    text: 'Заявка #1',
    reply_markup: { inline_keyboard: [[{ text: 'В работу', callback_data: 'lead:1:in_progress' }]] },
  });
  return sent.body.result.message_id;
}

beforeEach(async () => {
  sandbox = await startSandbox({ webhookRetryMs: 20, webhookTimeoutMs: 2000 });
});
afterEach(async () => {
  await sandbox.stop();
  for (const server of receivers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

describe('Telegram sandbox webhooks', () => {
  it('POSTs a pressed button to the webhook as JSON with the secret token header', async () => {
    const hook = await receiver(200);
    const messageId = await card();
    expect(await call('setWebhook', { url: hook.url, secret_token: SECRET })).toEqual({ status: 200, body: { ok: true, result: true } });

    const queryId = sandbox.press(CHAT, messageId, 'lead:1:in_progress');
    await waitFor(() => hook.received.length === 1, 5000, 'the delivery');
    const [{ headers, body }] = hook.received;
    expect(headers['content-type']).toBe('application/json');
    expect(headers['x-telegram-bot-api-secret-token']).toBe(SECRET);
    expect(body).toEqual({
      update_id: 1,
      callback_query: {
        id: queryId,
        from: DEFAULT_USER,
        message: expect.objectContaining({ message_id: messageId, chat: expect.objectContaining({ id: CHAT }), text: 'Заявка #1' }),
        chat_instance: String(CHAT),
        data: 'lead:1:in_progress',
      },
    });

    await waitFor(() => sandbox.webhookDeliveries[0]?.status === 200, 5000, 'the delivery to be recorded');
    expect(sandbox.webhookDeliveries).toEqual([{ url: hook.url, update_id: 1, at: expect.any(Number), status: 200 }]);
    // Telegram never gives the secret back.
    expect((await call('getWebhookInfo')).body.result).toEqual({
      url: hook.url,
      has_custom_certificate: false,
      pending_update_count: 0,
      max_connections: 40,
    });
    const state = (await (await fetch(`${sandbox.url}/sandbox/api/state`)).json()) as any;
    expect(state.webhook).toMatchObject({ url: hook.url, pending_update_count: 0 });
    expect(state.webhookDeliveries).toEqual([expect.objectContaining({ update_id: 1, status: 200 })]);
  });

  it('delivers the updates queued before setWebhook, in order, unless drop_pending_updates', async () => {
    sandbox.say(CHAT, 'первое');
    sandbox.say(CHAT, 'второе');
    expect((await call('getWebhookInfo')).body.result).toEqual({ url: '', has_custom_certificate: false, pending_update_count: 2 });
    const hook = await receiver(200);
    await call('setWebhook', { url: hook.url });
    await waitFor(() => sandbox.webhookDeliveries.filter((d) => d.status === 200).length === 2, 5000, 'both queued updates');
    expect(hook.received.map((r) => [r.body.update_id, r.body.message.text])).toEqual([
      [1, 'первое'],
      [2, 'второе'],
    ]);
    // No secret token set: no header.
    expect(hook.received[0].headers['x-telegram-bot-api-secret-token']).toBeUndefined();

    await call('deleteWebhook');
    sandbox.say(CHAT, 'устаревшее');
    const fresh = await receiver(200);
    await call('setWebhook', { url: fresh.url, drop_pending_updates: true });
    expect((await call('getWebhookInfo')).body.result.pending_update_count).toBe(0);
    sandbox.say(CHAT, 'новое');
    await waitFor(() => fresh.received.length === 1, 5000, 'the update after the drop');
    expect(fresh.received[0].body.message.text).toBe('новое');
  });

  it('refuses getUpdates while a webhook is set, ends a waiting poll on setWebhook, and polls again after deleteWebhook', async () => {
    const hook = await receiver(200);
    const waiting = call('getUpdates', { timeout: 30 });
    await waitFor(() => sandbox.polls.length === 1, 5000, 'the waiting poll');
    await call('setWebhook', { url: hook.url });
    expect(await waiting).toEqual({
      status: 409,
      body: { ok: false, error_code: 409, description: 'Conflict: terminated by setWebhook request' },
    });

    expect(await call('getUpdates', { timeout: 0 })).toEqual({
      status: 409,
      body: { ok: false, error_code: 409, description: WEBHOOK_ACTIVE },
    });

    expect(await call('deleteWebhook')).toEqual({ status: 200, body: { ok: true, result: true } });
    expect((await call('getWebhookInfo')).body.result.url).toBe('');
    sandbox.say(CHAT, '/start');
    const polled = await call('getUpdates', { timeout: 0 });
    expect(polled.status).toBe(200);
    expect(polled.body.result).toEqual([expect.objectContaining({ message: expect.objectContaining({ text: '/start' }) })]);
    expect(sandbox.polls.map((p) => p.status)).toEqual([409, 409, 200]);
    // Neither the refusals nor the setWebhook ending a poll is two pollers overlapping.
    expect(sandbox.pollConflicts).toBe(0);
  });

  it('delivers only the allowed_updates types and drops the others', async () => {
    const hook = await receiver(200);
    const messageId = await card();
    // As a JSON string, the way a form-encoded call sends it.
    await call('setWebhook', { url: hook.url, allowed_updates: JSON.stringify(['message']) });
    sandbox.press(CHAT, messageId, 'lead:1:in_progress');
    sandbox.say(CHAT, '/stickers_new');

    // Updates go in order: the message delivered means the earlier button press was dropped, not still waiting.
    await waitFor(() => sandbox.webhookDeliveries.some((d) => d.status === 200), 5000, 'the message delivery');
    expect(hook.received.map((r) => Object.keys(r.body))).toEqual([['update_id', 'message']]);
    expect(sandbox.webhookDeliveries).toHaveLength(1);
    expect((await call('getWebhookInfo')).body.result).toMatchObject({ allowed_updates: ['message'], pending_update_count: 0 });

    // Left out, allowed_updates keeps the previous setting, as in Telegram; an empty list lets every type through.
    await call('setWebhook', { url: hook.url, secret_token: SECRET });
    expect((await call('getWebhookInfo')).body.result.allowed_updates).toEqual(['message']);
    await call('setWebhook', { url: hook.url, allowed_updates: [] });
    expect((await call('getWebhookInfo')).body.result.allowed_updates).toBeUndefined();
    sandbox.press(CHAT, messageId, 'lead:1:in_progress');
    await waitFor(() => hook.received.length === 2, 5000, 'the button press');
    expect(hook.received[1].body.callback_query.data).toBe('lead:1:in_progress');
  });

  it('retries a failed delivery until the webhook takes it, reporting the last error, and then sends it no more', async () => {
    const hook = await receiver(500, 500, 200);
    await call('setWebhook', { url: hook.url });
    sandbox.say(CHAT, 'первое');
    await waitFor(() => sandbox.webhookDeliveries.some((d) => d.status === 200), 5000, 'the third try');
    expect(hook.received.map((r) => r.body.update_id)).toEqual([1, 1, 1]);
    const wrong = 'Wrong response from the webhook: 500 Internal Server Error';
    expect(sandbox.webhookDeliveries.map((d) => [d.update_id, d.status, d.error])).toEqual([
      [1, 500, wrong],
      [1, 500, wrong],
      [1, 200, undefined],
    ]);
    const info = (await call('getWebhookInfo')).body.result;
    expect(info).toMatchObject({ pending_update_count: 0, last_error_message: wrong });
    expect(Math.abs(info.last_error_date - Date.now() / 1000)).toBeLessThan(60);

    // One update at a time, in order: once the next one is in, the first is done for good.
    sandbox.say(CHAT, 'второе');
    await waitFor(() => hook.received.length === 4, 5000, 'the second update');
    await waitFor(() => sandbox.webhookDeliveries.length === 4 && sandbox.webhookDeliveries[3].status === 200, 5000, 'its record');
    expect(hook.received.map((r) => r.body.update_id)).toEqual([1, 1, 1, 2]);
  });

  it('reports a refused connection, and moves to a new webhook with the update still waiting', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));

    await call('setWebhook', { url: `http://127.0.0.1:${port}/hook` });
    sandbox.say(CHAT, 'первое');
    await waitFor(() => sandbox.webhookDeliveries.length >= 2, 5000, 'two refused tries');
    expect(sandbox.webhookDeliveries[0]).toMatchObject({ status: 0, error: 'Connection refused' });
    expect((await call('getWebhookInfo')).body.result).toMatchObject({ pending_update_count: 1, last_error_message: 'Connection refused' });

    const working = await receiver(200);
    await call('setWebhook', { url: working.url });
    await waitFor(() => working.received.length === 1, 5000, 'the delivery to the new webhook');
    expect(working.received[0].body.message.text).toBe('первое');
  });

  it('counts a webhook that does not answer in time as failed, and hangs up on it', async () => {
    await sandbox.stop();
    sandbox = await startSandbox({ webhookRetryMs: 20, webhookTimeoutMs: 100 });
    const silent = await receiver(null);
    await call('setWebhook', { url: silent.url });
    sandbox.say(CHAT, 'первое');
    await waitFor(() => sandbox.webhookDeliveries[0]?.error, 5000, 'the timeout');
    expect(sandbox.webhookDeliveries[0]).toMatchObject({ status: 0, error: 'Read timeout expired' });
    await waitFor(() => silent.closed > 0, 5000, 'the abandoned request to close');
    expect((await call('getWebhookInfo')).body.result).toMatchObject({
      pending_update_count: 1,
      last_error_message: 'Read timeout expired',
    });
  });

  it('refuses a bad secret_token and a url that is not http(s), as Telegram does', async () => {
    const hook = await receiver(200);
    for (const secret_token of ['a b', 'секрет', 'a+b/c=', 'x.y']) {
      expect(await call('setWebhook', { url: hook.url, secret_token })).toEqual({
        status: 400,
        body: { ok: false, error_code: 400, description: 'Bad Request: secret token contains unallowed characters' },
      });
    }
    expect((await call('setWebhook', { url: hook.url, secret_token: 'x'.repeat(257) })).body.description).toBe(
      'Bad Request: secret token is too long',
    );
    for (const url of ['ftp://example.com/hook', 'not a url', 'tg://resolve']) {
      expect(await call('setWebhook', { url })).toEqual({
        status: 400,
        body: { ok: false, error_code: 400, description: 'Bad Request: bad webhook: An HTTPS URL must be provided for webhook' },
      });
    }
    expect((await call('getWebhookInfo')).body.result.url).toBe('');

    expect((await call('setWebhook', { url: hook.url, secret_token: 'A'.repeat(200) + 'z_0-9' })).body.result).toBe(true);
    // An empty url removes the webhook, as in Telegram.
    expect((await call('setWebhook', { url: '' })).body.result).toBe(true);
    expect((await call('getWebhookInfo')).body.result.url).toBe('');
  });

  it('a second getUpdates while one waits ends the earlier with 409 and counts the overlap', async () => {
    const first = call('getUpdates', { timeout: 30 });
    await waitFor(() => sandbox.polls.length === 1, 5000, 'the first poll to wait');
    const second = await call('getUpdates', { timeout: 0 });
    expect(second).toEqual({ status: 200, body: { ok: true, result: [] } });
    expect(await first).toEqual({
      status: 409,
      body: {
        ok: false,
        error_code: 409,
        description: 'Conflict: terminated by other getUpdates request; make sure that only one bot instance is running',
      },
    });
    expect(sandbox.pollConflicts).toBe(1);
    expect(sandbox.polls.map((p) => [p.status, p.description])).toEqual([
      [409, 'Conflict: terminated by other getUpdates request; make sure that only one bot instance is running'],
      [200, undefined],
    ]);

    // One poll after another is no conflict.
    await call('getUpdates', { timeout: 0 });
    expect(sandbox.pollConflicts).toBe(1);
    const state = (await (await fetch(`${sandbox.url}/sandbox/api/state`)).json()) as any;
    expect(state.pollConflicts).toBe(1);
    expect(state.polls).toHaveLength(3);
    // getUpdates stays out of `calls`.
    expect(sandbox.callsOf('getUpdates')).toEqual([]);
  });

  it('a telegraf bot that stops (aborting its poll, then confirming its offset at once) is no overlap', async () => {
    // A race, so it is run a few times.
    for (let run = 0; run < 5; run += 1) {
      const bot = new Telegraf(sandbox.token, { telegram: { apiRoot: `${sandbox.url}/` } });
      const launched = bot.launch({ dropPendingUpdates: false });
      const longPoll = await waitFor(() => sandbox.polls.find((p) => p.timeout > 0 && p.status === 0 && !p.description), 5000, 'the poll');
      // A call while it polls, as a bot makes them, leaves an idle keep-alive connection: the confirming getUpdates
      // goes on it at once, so it can be read before the aborted poll's close.
      await bot.telegram.getMe();
      bot.stop();
      await launched;
      // The stopped poll's fate: abandoned by the bot, or ended as a conflict had it still been open.
      await waitFor(() => longPoll.status !== 0 || longPoll.description, 5000, 'the stopped poll to end');
      expect(longPoll).toMatchObject({ status: 0, description: 'the bot hung up before the answer' });
    }
    expect(sandbox.pollConflicts).toBe(0);
  });

  it('reset clears the webhook and drops the delivery in flight; stop drops it too', async () => {
    const silent = await receiver(null);
    await call('setWebhook', { url: silent.url });
    sandbox.say(CHAT, 'первое');
    await waitFor(() => silent.received.length === 1, 5000, 'the delivery');
    await fetch(`${sandbox.url}/sandbox/api/reset`, { method: 'POST' });
    await waitFor(() => silent.closed === 1, 5000, 'the request to be dropped');
    expect((await call('getWebhookInfo')).body.result).toEqual({ url: '', has_custom_certificate: false, pending_update_count: 0 });
    expect(sandbox.webhookDeliveries).toEqual([]);
    sandbox.say(CHAT, 'после сброса');
    expect((await call('getUpdates', { timeout: 0 })).body.result).toHaveLength(1);

    await call('setWebhook', { url: silent.url });
    await waitFor(() => silent.received.length === 2, 5000, 'the second delivery');
    await sandbox.stop();
    await waitFor(() => silent.closed === 2, 5000, 'the request to be dropped at stop');
    expect(sandbox.webhookDeliveries.at(-1)).toMatchObject({ status: 0, error: 'Cancelled: sandbox stopped' });
  });

  it('serves a telegraf bot on a webhook: its secret check, and the answer it gives in the webhook reply', async () => {
    const bot = new Telegraf(sandbox.token, { telegram: { apiRoot: `${sandbox.url}/` } });
    bot.on('callback_query', async (ctx) => {
      await ctx.answerCbQuery('готово');
    });
    const handle = bot.webhookCallback('/hook', { secretToken: SECRET });
    const server = createServer((req, res) => void handle(req, res));
    receivers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;

    await bot.telegram.setWebhook(url, { secret_token: 'some-other-secret' });
    const sent = await bot.telegram.sendMessage(CHAT, 'карточка', {
      reply_markup: { inline_keyboard: [[{ text: 'В работу', callback_data: 'lead:1:in_progress' }]] },
    });
    const queryId = sandbox.press(CHAT, sent.message_id, 'lead:1:in_progress');
    await waitFor(() => sandbox.webhookDeliveries[0]?.status, 5000, 'the refused delivery');
    expect(sandbox.webhookDeliveries[0]).toMatchObject({ status: 403, error: 'Wrong response from the webhook: 403 Forbidden' });

    await bot.telegram.setWebhook(url, { secret_token: SECRET });
    await waitFor(() => sandbox.state.callbackAnswers.length === 1, 5000, 'the answer');
    expect(sandbox.state.callbackAnswers).toEqual([expect.objectContaining({ callback_query_id: queryId, text: 'готово' })]);
    // telegraf answered in its reply to the delivery, not with a call of its own.
    expect(sandbox.callsOf('answerCallbackQuery')).toEqual([expect.objectContaining({ via: 'webhook', status: 200 })]);
    expect(await bot.telegram.getWebhookInfo()).toMatchObject({ url, pending_update_count: 0 });
  });
});
