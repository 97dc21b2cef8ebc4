/**
 * Webhook mode: with TELEGRAM_WEBHOOK_URL and TELEGRAM_WEBHOOK_SECRET the server sets the webhook at start
 * and takes the updates the sandbox posts to it, as Telegram does; nobody polls. The route checks the secret header
 * before anything else. Runs on both databases.
 */
import { ADMIN_CHAT, freePort, LEADS_CHAT, lead, memberActions, postLead, sandboxSuite, waitFor } from './harness';
import { loadServerConfig, ConfigError } from '../src/config/config';

const SECRET_TOKEN = 'webhook-secret-0123456789_abc-XYZ';
const { tmp, sandbox, start } = sandboxSuite();
const actions = memberActions(sandbox);
let n = 0;

async function webhookServer() {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/telegram/webhook`;
  const server = await start({
    dbPath: `${tmp.dir}/webhook-${++n}.sqlite`,
    port,
    polling: true,
    env: { TELEGRAM_WEBHOOK_URL: url, TELEGRAM_WEBHOOK_SECRET: SECRET_TOKEN },
  });
  await waitFor(() => sandbox.state.webhook, 5000, 'setWebhook');
  return { server, url };
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
