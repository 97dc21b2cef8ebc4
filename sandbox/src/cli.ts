#!/usr/bin/env node
import { DEFAULT_CHATS } from './state';
import { startSandbox } from './server';

/**
 * `telegram-sandbox`: runs the local Bot API on SANDBOX_PORT (3002) with the token TELEGRAM_BOT_TOKEN (or the default);
 * SANDBOX_INBOX_URL: the inbox's address, for the page's "open the inbox as <user>" links; SANDBOX_FIRST_MESSAGE_ID: the
 * lowest message id its chats give (1).
 */
async function main(): Promise<void> {
  const port = Number(process.env.SANDBOX_PORT ?? 3002);
  const sandbox = await startSandbox({
    port,
    token: process.env.TELEGRAM_BOT_TOKEN || undefined,
    host: process.env.SANDBOX_HOST ?? '127.0.0.1',
    inboxUrl: process.env.SANDBOX_INBOX_URL || undefined,
    firstMessageId: Number(process.env.SANDBOX_FIRST_MESSAGE_ID) || undefined,
  });
  console.log(`telegram sandbox on ${sandbox.url} (page: ${sandbox.url}/, token ${sandbox.token})`);
  console.log(`chats: ${DEFAULT_CHATS.map((c) => `${c.title} ${c.id}`).join(', ')}`);
  const stop = () => {
    void sandbox.stop().then(() => process.exit(0));
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
