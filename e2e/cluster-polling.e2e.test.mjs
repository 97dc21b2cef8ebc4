// Several instances end to end: two built servers (processes) on one throwaway PostgreSQL, in polling mode, against the
// Telegram sandbox. Only one of them polls (the sandbox sees no overlapping getUpdates); when that one is SIGKILLed,
// the other takes polling over and a press on a card works again within a minute.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { startPostgres } from '../scripts/lib/throwaway-postgres.cjs';
import { freePort, LEADS_CHAT, run, SECRET, waitForHttp, waitUntil } from './stack.mjs';

const TOKEN = '123456789:sandbox-token';
const children = new Set();
let postgres;
let databaseUrl;
let sandboxUrl;

before(async () => {
  postgres = await startPostgres();
  databaseUrl = await postgres.createDatabase('cluster_polling');
  const port = await freePort();
  const sandbox = track(run('sandbox', ['sandbox/dist/cli.js'], { SANDBOX_PORT: String(port) }));
  sandboxUrl = `http://127.0.0.1:${port}`;
  await waitForHttp(`${sandboxUrl}/sandbox/api/state`, sandbox, 'sandbox');
});
after(async () => {
  for (const child of children) child.kill('SIGKILL');
  await postgres?.stop();
});

function track(child) {
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

async function startServer() {
  const port = await freePort();
  const child = track(
    run('server', ['server/dist/main.js'], {
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_URL: databaseUrl,
      LEADS_SECRET: SECRET,
      LEADS_IP_SALT: 'e2e-salt',
      TELEGRAM_BOT_TOKEN: TOKEN,
      TELEGRAM_API_ROOT: sandboxUrl,
      LEADS_CHAT_ID: String(LEADS_CHAT),
      LOG_LEVEL: 'info',
    }),
  );
  await waitForHttp(`http://127.0.0.1:${port}/health`, child, 'server');
  return { child, url: `http://127.0.0.1:${port}` };
}

const sandbox = async (path, body) =>
  (
    await fetch(
      `${sandboxUrl}/sandbox/api/${path}`,
      body ? { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) } : {},
    )
  ).json();

async function pollingHolder() {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query("select holder from leases where name = 'telegram-polling'");
    return rows[0]?.holder;
  } finally {
    await client.end();
  }
}

describe('two instances in polling mode on one PostgreSQL', () => {
  it('only the leader polls; after it is killed the other polls and presses work again within a minute', async () => {
    const a = await startServer();
    const b = await startServer();
    const res = await fetch(`${a.url}/leads`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Stickers-Leads-Secret': SECRET },
      body: JSON.stringify({
        request_id: crypto.randomUUID(),
        name: 'Анна',
        telegram: '@anna_cluster',
        phone: '+79990009988',
        client_ip: '198.51.100.77',
      }),
    });
    assert.equal(res.status, 201);
    const number = (await res.json()).lead_number;
    const card = await waitUntil(
      async () => (await sandbox('state')).chats.find((c) => c.id === LEADS_CHAT).messages.find((m) => m.text.includes(`#${number}`)),
      15_000,
      'the card',
    );
    // Recorded as the lead's card: a kill between the send and its record leaves a second card (the crash drill's
    // allowance), and a press on the first one is then rightly "out of date".
    await waitUntil(
      async () => {
        const listed = await fetch(`${a.url}/leads`, { headers: { 'X-Stickers-Leads-Secret': SECRET } });
        return (await listed.json()).leads.find((l) => l.lead_number === number)?.published_at;
      },
      15_000,
      'the card recorded',
    );

    // Exactly one of them holds the polling lease and polls.
    const holder = await waitUntil(() => pollingHolder(), 15_000, 'a poller');
    const pids = { [a.child.pid]: a, [b.child.pid]: b };
    const leader = pids[Number(holder.split(':')[1])];
    assert.ok(leader, `the holder ${holder} is one of the two servers`);
    const follower = leader === a ? b : a;
    await waitUntil(async () => (await sandbox('state')).polls.length > 0, 15_000, 'a getUpdates');

    leader.child.kill('SIGKILL');
    const killedAt = Date.now();
    await new Promise((resolve) => leader.child.once('exit', resolve));

    const { callback_query_id: id } = await sandbox('press', {
      chat_id: LEADS_CHAT,
      message_id: card.message_id,
      data: `lead:${number}:new:in_progress`,
    });
    const answer = await waitUntil(
      async () => (await sandbox('state')).callbackAnswers.find((x) => x.callback_query_id === id),
      60_000,
      'the press answered by the other instance',
    );
    assert.equal(answer.text, 'Готово: 🛠 В работе');
    assert.ok(Date.now() - killedAt < 60_000, 'taken over within a minute');
    assert.equal(Number((await pollingHolder()).split(':')[1]), follower.child.pid);
    assert.equal((await sandbox('state')).pollConflicts, 0, 'no overlapping getUpdates');
  });
});
