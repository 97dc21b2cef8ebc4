// Late leads end to end: the built server, the built landing (with its spool) and the Telegram sandbox as processes.
// A request the server could not take goes to the group through the fallback and into the landing's spool; once the
// server takes it, the replay stores it under the same request_id and the fallback message becomes its card (one
// message in the group, buttons that work). Also: a server answering 500 for a while, Telegram down as well (route
// lost, and the visitor sending the same form again), and a wrong secret fixed by restarting the landing.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { freePort, LEADS_CHAT, root, run, SECRET, startLanding as startStackLanding, waitForHttp, waitUntil } from './stack.mjs';

const TOKEN = '123456789:sandbox-token';
const ADMIN_CHAT = -1001000000002;
/** The landing's replay: first 5 s after the submission, then 15 s after a failure (its backoff is not configurable). */
const REPLAY_WAIT_MS = 25_000;
const dir = mkdtempSync(join(tmpdir(), 'late-leads-e2e-'));
const children = new Set();
let sandboxUrl;

before(async () => {
  const port = await freePort();
  const sandbox = start('sandbox', ['sandbox/dist/cli.js'], { SANDBOX_PORT: String(port) });
  sandboxUrl = `http://127.0.0.1:${port}`;
  await waitForHttp(`${sandboxUrl}/sandbox/api/state`, sandbox, 'sandbox');
});
after(async () => {
  await Promise.all([...children].map((c) => stop(c)));
  rmSync(dir, { recursive: true, force: true });
});

/** Every process this file started and that still runs, for the cleanup. */
function track(child) {
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

function start(name, args, env, cwd) {
  return track(run(name, args, env, cwd));
}

function stop(child, signal = 'SIGTERM') {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  const exited = new Promise((r) => child.once('exit', r));
  child.kill(signal);
  return exited;
}

/** The built server on `port` with the database at `dbPath` (the same port and file after a restart). */
async function startServer(port, dbPath) {
  const child = start('server', ['server/dist/main.js'], {
    PORT: String(port),
    HOST: '127.0.0.1',
    DATABASE_PATH: dbPath,
    LEADS_SECRET: SECRET,
    LEADS_IP_SALT: 'e2e-salt',
    TELEGRAM_BOT_TOKEN: TOKEN,
    TELEGRAM_API_ROOT: sandboxUrl,
    LEADS_CHAT_ID: String(LEADS_CHAT),
    ADMIN_CHAT_ID: String(ADMIN_CHAT),
    PUBLISH_INTERVAL_SEC: '1',
  });
  await waitForHttp(`http://127.0.0.1:${port}/health`, child, 'server');
  return child;
}

/** The built landing, replaying its spool at `spoolDir` to `endpoint` with `secret`. */
function startLanding(endpoint, spoolDir, secret = SECRET) {
  const env = {
    LEADS_ENDPOINT: endpoint,
    LEADS_SECRET: secret,
    TELEGRAM_BOT_TOKEN: TOKEN,
    TELEGRAM_API_ROOT: sandboxUrl,
    LEADS_CHAT_ID: String(LEADS_CHAT),
    MIN_FILL_MS: '0',
    LANDING_SPOOL_DIR: spoolDir,
  };
  return startStackLanding(env, { onStart: track });
}

/** A fresh server (started, then stopped when `down`), a database, a spool directory and a landing for one case. */
async function setup(name, { down = false, endpoint, secret } = {}) {
  const serverPort = await freePort();
  const dbPath = join(dir, `${name}.sqlite`);
  const spoolDir = mkdtempSync(join(dir, `${name}-spool-`));
  let server = await startServer(serverPort, dbPath);
  if (down) await stop(server);
  const serverUrl = `http://127.0.0.1:${serverPort}`;
  const landing = await startLanding(endpoint?.(serverUrl) ?? `${serverUrl}/leads`, spoolDir, secret);
  return {
    dbPath,
    spoolDir,
    landing,
    serverUrl,
    server: () => server,
    async startServer() {
      server = await startServer(serverPort, dbPath);
    },
  };
}

/** A person's submission without JavaScript: the page, then its form posted back. `again` posts the same form again. */
async function submitForm(url, fields) {
  const page = await (await fetch(url)).text();
  const requestId = /name="requestId" value="([^"]+)"/.exec(page)[1];
  const startedAt = /name="startedAt" value="([^"]+)"/.exec(page)[1];
  const form = new URLSearchParams({ requestId, startedAt, company: '', ...fields });
  const post = async () => {
    const res = await fetch(`${url}/?index`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: form,
    });
    return /role="(?:status|alert)" data-state="(\w+)"/.exec(await res.text())?.[1];
  };
  return { requestId, state: await post(), again: post };
}

const sandbox = async (path, body) =>
  (
    await fetch(
      `${sandboxUrl}/sandbox/api/${path}`,
      body ? { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) } : {},
    )
  ).json();
const group = async () => (await sandbox('state')).chats.find((c) => c.id === LEADS_CHAT).messages;
/** Every message in the group about this request: its fallback message, its card, replies naming its number. */
const about = async (name) => (await group()).filter((m) => m.text.includes(name));

function leadRow(dbPath, requestId) {
  const db = new Database(dbPath, { readonly: true });
  try {
    return db.prepare('select * from leads where request_id = ?').get(requestId);
  } finally {
    db.close();
  }
}

function leadCount(dbPath) {
  const db = new Database(dbPath, { readonly: true });
  try {
    return db.prepare('select count(*) as n from leads').get().n;
  } finally {
    db.close();
  }
}

/** Presses a card's button as a group member, through the sandbox, and waits for the bot's answer. */
async function press(messageId, data) {
  const { callback_query_id: id } = await sandbox('press', { chat_id: LEADS_CHAT, message_id: messageId, data });
  const answer = await waitUntil(
    async () => (await sandbox('state')).callbackAnswers.find((a) => a.callback_query_id === id),
    10000,
    'the answer',
  );
  return answer.text;
}

const spoolEntries = (spoolDir) => readdirSync(spoolDir).filter((n) => n.endsWith('.json') && !n.startsWith('.'));

/** The adopted card: in the database under the request_id, the fallback message edited into it. */
async function adoptedCard(c, requestId, fallbackId) {
  const row = await waitUntil(
    () => {
      const r = leadRow(c.dbPath, requestId);
      return r?.fallback_state === 'adopted' ? r : null;
    },
    REPLAY_WAIT_MS,
    'the replayed lead adopting its fallback message',
  );
  assert.equal(row.message_id, fallbackId);
  const card = (await group()).find((m) => m.message_id === fallbackId);
  assert.match(card.text, new RegExp(`^🆕 Заявка #${row.id}\\n`));
  assert.match(card.text, /📨 Пришла через резервный канал в \d\d:\d\d/);
  return { row, card };
}

describe('late leads, end to end', () => {
  it('server down: fallback and "sent"; server up: the same request_id in the database, the fallback message is the card', async () => {
    const c = await setup('down', { down: true });
    const name = 'Дина Резервная';
    const { requestId, state } = await submitForm(c.landing.url, { name, telegram: '@dina_reserve', phone: '+7 999 100-20-30' });
    assert.equal(state, 'sent');
    const [fallback] = await about(name);
    assert.match(fallback.text, new RegExp(`^⚠️ Запасной канал: .*request_id ${requestId}\\)\\nПричина: сервер недоступен\\n`));
    assert.equal(spoolEntries(c.spoolDir).length, 1);

    await c.startServer();
    const { row, card } = await adoptedCard(c, requestId, fallback.message_id);
    assert.equal(row.late_route, 'fallback');
    assert.equal(row.late_reason, 'network');
    assert.ok(row.received_at > row.created_at, 'created at the visitor time, received later');
    assert.deepEqual(card.reply_markup.inline_keyboard[0], [
      { text: 'В работу', callback_data: `lead:${row.id}:new:in_progress` },
      { text: 'Спам', callback_data: `lead:${row.id}:new:spam` },
    ]);
    assert.equal(await press(card.message_id, `lead:${row.id}:new:in_progress`), 'Готово: 🛠 В работе');
    const [only] = await about(name);
    assert.equal((await about(name)).length, 1, 'one message in the group for it');
    assert.match(only.text, /Статус: 🛠 В работе — Мария Менеджер/);
    await waitUntil(() => spoolEntries(c.spoolDir).length === 0, 5000, 'the spool entry to be deleted');

    // The story, as ops read it.
    const story = execFileSync(process.execPath, ['server/dist/cli.js', 'trace', requestId], {
      cwd: root,
      env: { PATH: process.env.PATH, DATABASE_PATH: c.dbPath },
      encoding: 'utf8',
    });
    assert.match(story, /late {10}submitted on the landing .*route fallback \(network\); replayed from the landing's spool/);
    assert.match(story, /fallback msg {2}chat -1001000000001, message \d+, sent .*: edited into the card/);
    assert.match(story, /received_late: .*fallback message: chat/);
    assert.match(story, /fallback_adopted: the fallback message is the card now/);
    assert.match(story, /new → in_progress by Мария Менеджер/);
    await stop(c.landing.child);
    await stop(c.server());
  });

  it('the server answers 500 for a while: the replay backs off, then the fallback message becomes the card', async () => {
    let failing = true;
    const seen = [];
    let target;
    const stand = createServer((req, res) => {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', async () => {
        seen.push(JSON.parse(body));
        if (failing) return res.writeHead(500, { 'Content-Type': 'application/json' }).end('{"error":"boom"}');
        const answer = await fetch(`${target}/leads`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', 'X-Stickers-Leads-Secret': req.headers['x-stickers-leads-secret'] },
          body,
        });
        res.writeHead(answer.status, { 'Content-Type': 'application/json' }).end(await answer.text());
      });
    });
    await new Promise((r) => stand.listen(0, '127.0.0.1', r));
    try {
      const c = await setup('http500', { endpoint: () => `http://127.0.0.1:${stand.address().port}/leads` });
      target = c.serverUrl;
      const name = 'Пётр Пятисотый';
      const { requestId, state } = await submitForm(c.landing.url, { name, telegram: '@petr_five', phone: '+7 999 100-20-31' });
      assert.equal(state, 'sent');
      const [fallback] = await about(name);
      // The first replay gets a 500 too; the server is healthy for the next one.
      await waitUntil(() => seen.filter((b) => b.request_id === requestId && b.late).length === 1, 10000, 'the first replay');
      failing = false;
      const { row } = await adoptedCard(c, requestId, fallback.message_id);
      assert.equal(row.late_reason, '500');
      assert.equal((await about(name)).length, 1);
      assert.match(c.landing.child.output, new RegExp(`\\[spool\\] ${requestId} replay failed \\(500\\), attempt 1`));
      await stop(c.landing.child);
      await stop(c.server());
    } finally {
      stand.closeAllConnections();
      await new Promise((r) => stand.close(r));
    }
  });

  it('Telegram down too (lost: the visitor sees the error): the spool still delivers it; the same form sent again adds nothing', async () => {
    const c = await setup('lost', { down: true });
    await sandbox('faults', { method: 'sendMessage', kind: 'server_error', status: 502, chat_id: LEADS_CHAT, count: 2 });
    const [nameA, nameB] = ['Лев Потерянный', 'Лиза Вернувшаяся'];
    const a = await submitForm(c.landing.url, { name: nameA, telegram: '@lev_lost', phone: '+7 999 100-20-32' });
    const b = await submitForm(c.landing.url, { name: nameB, telegram: '@liza_back', phone: '+7 999 100-20-34' });
    assert.deepEqual([a.state, b.state], ['error', 'error']);
    assert.equal((await about(nameA)).length + (await about(nameB)).length, 0);
    assert.equal(spoolEntries(c.spoolDir).length, 2, 'kept for the replay all the same');
    // B sends the same form again (same request_id): Telegram is back, the server still is not.
    assert.equal(await b.again(), 'sent');
    const [fallbackB] = await about(nameB);
    assert.equal(spoolEntries(c.spoolDir).length, 2, 'still one entry per request_id');

    await c.startServer();
    // A had no fallback message: a card of its own, saying it came late.
    const rowA = await waitUntil(() => leadRow(c.dbPath, a.requestId)?.published_at && leadRow(c.dbPath, a.requestId), REPLAY_WAIT_MS, 'A');
    assert.equal(rowA.late_route, 'lost');
    const [cardA] = await about(nameA);
    assert.match(cardA.text, new RegExp(`^🆕 Заявка #${rowA.id}\\n.*\\n⏳ Пришла с опозданием`));
    // B's fallback message became its card.
    await adoptedCard(c, b.requestId, fallbackB.message_id);
    // Sent once more with the server up: known request_ids, nothing new.
    assert.deepEqual([await a.again(), await b.again()], ['sent', 'sent']);
    assert.equal(leadCount(c.dbPath), 2);
    assert.equal((await about(nameA)).length, 1, 'one lead, one message in the group for A');
    assert.equal((await about(nameB)).length, 1, 'one lead, one message in the group for B');
    await stop(c.landing.child);
    await stop(c.server());
  });

  it('a wrong secret on the landing (401): fallback; the landing restarted with the right one replays it', async () => {
    const c = await setup('secret', { secret: 'a-wrong-secret-0123456789' });
    const name = 'Ян Секретов';
    const { requestId, state } = await submitForm(c.landing.url, { name, telegram: '@yan_secret', phone: '+7 999 100-20-33' });
    assert.equal(state, 'sent');
    const [fallback] = await about(name);
    // The group is told it is the landing's secret, not an outage.
    assert.equal(fallback.text.split('\n')[1], 'Причина: сервер не принял секрет лендинга (LEADS_SECRET не тот, что у сервера)');
    assert.match(c.landing.child.output, new RegExp(`\\[request\\] ${requestId} → fallback \\(401`));

    await stop(c.landing.child);
    const fixed = await startLanding(`${c.serverUrl}/leads`, c.spoolDir, SECRET);
    const { row } = await adoptedCard(c, requestId, fallback.message_id);
    assert.equal(row.late_reason, '401');
    assert.equal((await about(name)).length, 1);
    await waitUntil(() => fixed.child.output.includes(`[spool] ${requestId} replayed → 201`), 5000, 'the replay line');
    await stop(fixed.child);
    await stop(c.server());
  });
});
