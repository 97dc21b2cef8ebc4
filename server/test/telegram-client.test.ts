/**
 * One telegraf client per app, every Bot API call through the gateway, and long polling started through telegraf's
 * public launch() with the launcher's own retries (docs/requirements.md §9, §10.1).
 */
import { join } from 'node:path';
import { getBotToken } from 'nestjs-telegraf';
import type { Telegraf } from 'telegraf';
import { AlertsService } from '../src/alerts/alerts.service';
import { TelegramGateway } from '../src/telegram/telegram.gateway';
import { SettingsRepository } from '../src/repositories/settings.repository';
import { ADMIN_CHAT, LEADS_CHAT, callBotApi, lead, memberActions, postLead, publishLead, sandboxSuite, waitFor } from './harness';
import { sqlRows } from './support/test-database';

const RETRY_MS = 100;
const CONFLICT = 'Conflict: terminated by other getUpdates request; make sure that only one bot instance is running';
const { tmp, sandbox, start } = sandboxSuite();
const { press } = memberActions(sandbox);
let n = 0;

/** The real app as the harness starts it, with the launcher's retry delay shortened so retries take no seconds. */
async function boot(options: { polling?: boolean; telegram?: boolean } = {}) {
  const server = await start({
    dbPath: join(tmp.dir, `client-${++n}.sqlite`),
    sandbox: options.telegram === false ? undefined : sandbox,
    polling: options.polling ?? false,
    botRetryMs: RETRY_MS,
  });
  return { ...server, gateway: server.app.get(TelegramGateway) };
}
type Server = Awaited<ReturnType<typeof boot>>;

const lines = (server: Server, text: string, level = '') => server.logger.lines.filter((l) => l.startsWith(level) && l.includes(text));

/** A published card, pressed "В работу" by a member: resolves with the bot's answer once it has come. */
async function pressNewCard(server: Server): Promise<string> {
  const id = (await publishLead(server)).body.lead_number as number;
  const card = sandbox.messages(LEADS_CHAT).find((m) => m.text.startsWith(`🆕 Заявка #${id}\n`))!;
  return press(LEADS_CHAT, card.message_id, `lead:${id}:new:in_progress`);
}

describe('one telegraf client', () => {
  it("the gateway calls through the bot's own client; the bot asks getMe once at start and answers presses", async () => {
    const server = await boot({ polling: true });
    const bot = server.app.get<Telegraf>(getBotToken(), { strict: false });
    expect(server.gateway.available).toBe(true);
    const callApi = jest.spyOn(bot.telegram, 'callApi');
    expect(await pressNewCard(server)).toBe('Готово: 🛠 В работе');
    expect(callApi).toHaveBeenCalledWith('answerCallbackQuery', expect.anything(), expect.anything());
    expect(sandbox.callsOf('getMe')).toHaveLength(1);
    expect(sandbox.callsOf('deleteWebhook')).toHaveLength(1);
    expect(sandbox.callsOf('setMyCommands')).toHaveLength(1);
  });

  it('without a token there is no bot: the gateway is unavailable, and an alert is only logged', async () => {
    const server = await boot({ telegram: false });
    expect(() => server.app.get(getBotToken(), { strict: false })).toThrow();
    expect(server.gateway.available).toBe(false);
    expect(await server.app.get(AlertsService).sendThrottled('probe', 60_000, 'проверка')).toBe('no_target');
    expect(lines(server, 'alert probe not sent (no TELEGRAM_BOT_TOKEN or ADMIN_CHAT_ID)')).toHaveLength(1);
    expect(lines(server, 'TELEGRAM_BOT_TOKEN is not set: leads are stored, publishing and alerts are paused')).toHaveLength(1);
  });

  it('without a token the outbox passes take no lease and read nothing: the lead is stored and waits', async () => {
    const server = await boot({ telegram: false });
    const settings = jest.spyOn(server.app.get(SettingsRepository), 'get');
    for (let i = 0; i < 3; i += 1) expect((await postLead(server, lead())).status).toBe(201);
    await server.outbox.tick();
    await server.outbox.whenIdle();
    // An instance without a bot holding the outbox's lease would keep an instance with one from publishing.
    expect(await sqlRows(server.db, "select name from leases where name = 'outbox'")).toEqual([]);
    expect(settings).not.toHaveBeenCalled();
    expect(await sqlRows(server.db, 'select id from leads where published_at is null')).toHaveLength(3);
    expect(lines(server, 'publishing paused: TELEGRAM_BOT_TOKEN is not set (leads are stored)')).toHaveLength(1);
  });
});

describe('alerts go through the gateway', () => {
  it('a hanging Telegram is cut off after TELEGRAM_TIMEOUT_MS: logged as failed, the throttle given back', async () => {
    const server = await boot();
    const alerts = server.app.get(AlertsService);
    sandbox.inject({ method: 'sendMessage', kind: 'hang', chat_id: ADMIN_CHAT });
    const startedAt = Date.now();
    expect(await alerts.sendThrottled('probe', 60_000, 'проверка')).toBe('failed');
    const took = Date.now() - startedAt;
    expect(took).toBeGreaterThanOrEqual(450); // TELEGRAM_TIMEOUT_MS is 500 in tests
    expect(took).toBeLessThan(3000);
    expect(lines(server, 'alert probe failed')).toEqual([expect.stringContaining('timeout: Telegram did not answer in time')]);
    expect(await alerts.sendThrottled('probe', 60_000, 'проверка')).toBe('sent');
    expect(sandbox.messages(ADMIN_CHAT).map((m) => m.text)).toEqual(['проверка']);
  });

  it('flood control is classified: the failure names retry_after', async () => {
    const server = await boot();
    sandbox.inject({ method: 'sendMessage', kind: 'retry_after', retry_after: 7, chat_id: ADMIN_CHAT });
    expect(await server.app.get(AlertsService).sendThrottled('probe', 60_000, 'проверка')).toBe('failed');
    expect(lines(server, 'alert probe failed')).toEqual([expect.stringMatching(/"kind":"flood".*"retry_after_sec":7/)]);
  });
});

describe('long polling through launch(), with retries', () => {
  it('getUpdates answers 409 (another instance polls): tried again, one warning, then polling and presses work', async () => {
    sandbox.inject({ method: 'getUpdates', kind: 'server_error', status: 409, description: CONFLICT, count: 3 });
    const server = await boot({ polling: true });
    await waitFor(() => lines(server, 'polling for updates as @stickers_leads_bot').length > 0, 10_000, 'polling');
    // One warning for the change to failing; the tries after it only at debug level.
    expect(lines(server, 'bot polling failed', 'warn')).toEqual([expect.stringContaining(`409: ${CONFLICT}`)]);
    expect(lines(server, 'bot polling failed again', 'debug')).toHaveLength(2);
    expect(lines(server, 'polling for updates')).toEqual([expect.stringContaining('@stickers_leads_bot after 3 failed tries')]);
    expect(await pressNewCard(server)).toBe('Готово: 🛠 В работе');
    // The bot's name is known after the first getMe; every try deletes the webhook as launch() does.
    expect(sandbox.callsOf('getMe')).toHaveLength(1);
    expect(sandbox.callsOf('deleteWebhook')).toHaveLength(4);
    expect(sandbox.callsOf('setMyCommands')).toHaveLength(1);
  });

  it('Telegram is down at start (getMe fails): the app serves, the bot starts once it answers', async () => {
    sandbox.inject({ method: 'getMe', kind: 'server_error', status: 502, description: 'Bad Gateway', count: 2 });
    const server = await boot({ polling: true });
    await waitFor(() => lines(server, 'polling for updates').length > 0, 10_000, 'polling');
    expect(lines(server, 'bot polling failed', 'warn')).toEqual([expect.stringContaining('502: Bad Gateway')]);
    expect(lines(server, 'polling for updates')).toEqual([expect.stringContaining('after 2 failed tries')]);
    expect(sandbox.callsOf('getMe')).toHaveLength(3);
    expect(await pressNewCard(server)).toBe('Готово: 🛠 В работе');
  });

  it('a getMe that hangs is cut off after TELEGRAM_TIMEOUT_MS and tried again', async () => {
    sandbox.inject({ method: 'getMe', kind: 'hang' });
    const server = await boot({ polling: true });
    await waitFor(() => lines(server, 'polling for updates').length > 0, 10_000, 'polling');
    expect(lines(server, 'bot polling failed', 'warn')).toEqual([expect.stringContaining('timeout: Telegram did not answer in time')]);
    expect(await pressNewCard(server)).toBe('Готово: 🛠 В работе');
  });

  it('at shutdown the retries stop, and a bot that polls is stopped', async () => {
    sandbox.inject({ method: 'getMe', kind: 'server_error', status: 502, description: 'Bad Gateway', count: 1000 });
    const failing = await boot({ polling: true });
    await waitFor(() => sandbox.callsOf('getMe').length >= 2, 5000, 'a retry');
    await failing.close();
    const tries = sandbox.callsOf('getMe').length;
    await new Promise((r) => setTimeout(r, 4 * RETRY_MS));
    expect(sandbox.callsOf('getMe')).toHaveLength(tries);
    sandbox.clearFaults();

    const polling = await boot({ polling: true });
    await waitFor(() => lines(polling, 'polling for updates').length > 0, 10_000, 'polling');
    await polling.close();
    // A press after the close reaches no bot: nobody answers it.
    const sent = await callBotApi<{ message_id: number }>(sandbox, 'sendMessage', {
      chat_id: LEADS_CHAT,
      text: 'карточка',
      reply_markup: { inline_keyboard: [[{ text: 'x', callback_data: 'x' }]] },
    });
    sandbox.press(LEADS_CHAT, sent.message_id, 'x');
    await new Promise((r) => setTimeout(r, 300));
    expect(sandbox.state.callbackAnswers).toHaveLength(0);
    expect(polling.logger.lines.filter((l) => l.startsWith('error') || l.startsWith('warn'))).toEqual([]);
  });
});
