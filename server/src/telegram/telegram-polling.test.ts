// The polling control on its own, against the sandbox: a stop aborts the long poll and is over when it has ended, a
// stop or pause that comes before telegraf's poller exists still ends the run, and no two getUpdates overlap.
import { BOT_USER, TelegramSandbox } from '@stickers/telegram-sandbox';
import { Telegraf } from 'telegraf';
import { TelegramGateway, telegrafApiRoot } from './telegram.gateway';
import { TelegramPolling } from './telegram-polling';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitFor(check: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

/** A promise with its resolve, to hold a call until the test lets it go. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

let sandbox: TelegramSandbox;
let stops: (() => Promise<void>)[] = [];

beforeEach(async () => {
  sandbox = await new TelegramSandbox().start();
});

afterEach(async () => {
  await Promise.all(stops.map((stop) => stop()));
  stops = [];
  await sandbox.stop();
});

/**
 * A bot on the sandbox, its gateway and its polling control. `hold(method, params)` may return a promise the call
 * waits for before it goes out; `inFlight`/`maxInFlight` count the getUpdates calls under way at once.
 */
function setUp(hold?: (method: string, params: Record<string, unknown>) => Promise<unknown> | undefined) {
  const bot = new Telegraf(sandbox.token, { telegram: { apiRoot: telegrafApiRoot(sandbox.url) } });
  const gateway = new TelegramGateway({ telegramTimeoutMs: 2000 }, bot);
  const polling = new TelegramPolling(gateway, bot);
  stops.push(() => polling.stop());
  const counts = { inFlight: 0, maxInFlight: 0, getUpdates: 0 };
  const callApi = bot.telegram.callApi.bind(bot.telegram);
  jest.spyOn(bot.telegram, 'callApi').mockImplementation((async (method: string, payload: Record<string, unknown>, options: never) => {
    await hold?.(method, payload ?? {});
    if (method !== 'getUpdates') return callApi(method as never, payload as never, options);
    counts.getUpdates += 1;
    counts.inFlight += 1;
    counts.maxInFlight = Math.max(counts.maxInFlight, counts.inFlight);
    try {
      return await callApi(method as never, payload as never, options);
    } finally {
      counts.inFlight -= 1;
    }
  }) as never);
  return { bot, polling, counts };
}

/** The sandbox holds a long poll of the bot open (no update waits). */
const longPollWaiting = () => sandbox.polls.some((p) => p.status === 0 && p.timeout > 0 && p.description === undefined);

describe('TelegramPolling', () => {
  it('stop aborts the waiting long poll, resolves once the run is over, and nothing polls after it', async () => {
    const { polling, counts } = setUp();
    const launched = jest.fn();
    const run = polling.poll(launched);
    await waitFor(longPollWaiting, 'a long poll');
    expect(launched).toHaveBeenCalledWith(BOT_USER.username);

    const started = Date.now();
    await polling.stop();
    // Well within the 50 s of the long poll: it was aborted, not waited out.
    expect(Date.now() - started).toBeLessThan(2000);
    expect(await run).toEqual({ ok: true, value: undefined });
    expect(counts.inFlight).toBe(0);
    expect(longPollWaiting()).toBe(false);

    const polls = counts.getUpdates;
    await sleep(200);
    expect(counts.getUpdates).toBe(polls);
    // Stopped for good: another run does not launch.
    expect(await polling.poll(launched)).toEqual({ ok: true, value: undefined });
    expect(counts.getUpdates).toBe(polls);
    expect(sandbox.callsOf('deleteWebhook')).toHaveLength(1);
  });

  it('a stop while launch() still waits for deleteWebhook ends the poller it goes on to start', async () => {
    const deleteWebhook = gate();
    const { polling, counts } = setUp((method) => (method === 'deleteWebhook' ? deleteWebhook.opened : undefined));
    const run = polling.poll(() => undefined);
    await waitFor(() => sandbox.callsOf('getMe').length === 1, 'getMe');
    await sleep(50);

    // telegraf's own stop() would refuse here ("Bot is not running!"): no poller exists yet.
    const stopped = polling.stop();
    deleteWebhook.open();
    await stopped;
    expect(await run).toEqual({ ok: true, value: undefined });
    expect(counts.inFlight).toBe(0);
    expect(longPollWaiting()).toBe(false);
    const polls = counts.getUpdates;
    await sleep(200);
    expect(counts.getUpdates).toBe(polls);
  });

  it('a pause before the launch (getMe still out): the run ends without polling', async () => {
    const getMe = gate();
    const { polling, counts } = setUp((method) => (method === 'getMe' ? getMe.opened : undefined));
    const run = polling.poll(() => undefined);
    await sleep(50);
    const paused = polling.pause();
    getMe.open();
    await paused;
    expect(await run).toEqual({ ok: true, value: undefined });
    expect(sandbox.callsOf('deleteWebhook')).toHaveLength(0);
    expect(counts.getUpdates).toBe(0);
  });

  it('no overlapping getUpdates: a run asked for while the paused one is ending starts after its last getUpdates', async () => {
    // The paused poller's last getUpdates (telegraf confirms the offset with `limit: 1`) is held a while.
    const { polling, counts } = setUp((method, params) => (method === 'getUpdates' && params.limit === 1 ? sleep(300) : undefined));
    const first = polling.poll(() => undefined);
    await waitFor(longPollWaiting, 'the first long poll');

    const paused = polling.pause();
    const second = polling.poll(() => undefined);
    expect(await first).toEqual({ ok: true, value: undefined });
    await paused;
    await waitFor(longPollWaiting, 'the second long poll');
    expect(counts.maxInFlight).toBe(1);
    expect(sandbox.pollConflicts).toBe(0);

    await polling.stop();
    expect(await second).toEqual({ ok: true, value: undefined });
    expect(counts.maxInFlight).toBe(1);
  });

  it('a second run while one polls is a bug: refused', async () => {
    const { polling } = setUp();
    const run = polling.poll(() => undefined);
    await expect(polling.poll(() => undefined)).rejects.toThrow('already polling');
    await polling.stop();
    expect(await run).toEqual({ ok: true, value: undefined });
  });

  it("telegraf's own stop (nestjs-telegraf's, at shutdown) on a bot that never polled does not throw", () => {
    const { bot } = setUp();
    expect(() => bot.stop('shutdown')).not.toThrow();
  });

  it('without a bot: no_bot, and stop has nothing to wait for', async () => {
    const polling = new TelegramPolling(new TelegramGateway({ telegramTimeoutMs: 2000 }));
    expect(await polling.poll(() => undefined)).toMatchObject({ ok: false, kind: 'no_bot' });
    await polling.stop();
  });
});
