// The landing's spool with the built landing as a process, the Telegram sandbox and a stand-in for
// POST /leads that the test controls: a request the server did not take (503) goes to the group through the fallback,
// is on disk before the visitor sees "sent", survives a SIGKILL of the landing and is replayed after the restart with
// the same request_id and the `late` object; its file is then gone. Two landings replay only their own spools, and a
// second landing on the same spool directory does not start.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { freePort, LEADS_CHAT, run, startLanding as startStackLanding, tempSpoolDir, waitForHttp, waitUntil } from './stack.mjs';

const SECRET = 'spool-e2e-secret-0123456789';
const TOKEN = '123456789:sandbox-token';
let sandbox;
let sandboxUrl;
let stand;
let standUrl;
/** Every POST /leads the stand-in got: { path, secret, body }. */
const received = [];
/** The status the stand-in answers on each path (`/a/leads`, …); 503 until a test says otherwise. */
const statuses = new Map();
const children = [];
const dirs = [];

before(async () => {
  const port = await freePort();
  sandbox = run('sandbox', ['sandbox/dist/cli.js'], { SANDBOX_PORT: String(port) });
  children.push(sandbox);
  sandboxUrl = `http://127.0.0.1:${port}`;
  await waitForHttp(`${sandboxUrl}/sandbox/api/state`, sandbox, 'sandbox');
  stand = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      received.push({ path: req.url, secret: req.headers['x-stickers-leads-secret'], body: JSON.parse(body) });
      const status = statuses.get(req.url) ?? 503;
      const answer = status === 201 ? { lead_number: received.length, duplicate: false, repeat: false } : { error: 'unavailable' };
      res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(answer));
    });
  });
  await new Promise((r) => stand.listen(0, '127.0.0.1', r));
  standUrl = `http://127.0.0.1:${stand.address().port}`;
});
after(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
  await Promise.all(children.map((c) => (c.exitCode !== null || c.signalCode !== null ? null : new Promise((r) => c.once('exit', r)))));
  stand?.closeAllConnections();
  await new Promise((r) => (stand ? stand.close(r) : r()));
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function newSpoolDir() {
  const dir = tempSpoolDir();
  dirs.push(dir);
  return dir;
}

/** The built landing on a free port, with the server at `${standUrl}${path}` and the sandbox as Telegram. */
function startLanding(path, spoolDir, { wait = true } = {}) {
  const env = {
    LEADS_ENDPOINT: `${standUrl}${path}`,
    LEADS_SECRET: SECRET,
    TELEGRAM_BOT_TOKEN: TOKEN,
    TELEGRAM_API_ROOT: sandboxUrl,
    LEADS_CHAT_ID: String(LEADS_CHAT),
    MIN_FILL_MS: '0',
    LANDING_SPOOL_DIR: spoolDir,
  };
  return startStackLanding(env, { wait, onStart: (child) => children.push(child) });
}

/** A person's submission without JavaScript: the page, then its form posted back. */
async function submitForm(url, fields) {
  const page = await (await fetch(url)).text();
  const requestId = /name="requestId" value="([^"]+)"/.exec(page)[1];
  const startedAt = /name="startedAt" value="([^"]+)"/.exec(page)[1];
  const form = new URLSearchParams({ requestId, startedAt, company: '', ...fields });
  const res = await fetch(`${url}/?index`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: form,
  });
  const html = await res.text();
  return { requestId, state: /role="(?:status|alert)" data-state="(\w+)"/.exec(html)?.[1] };
}

const entriesIn = (dir) => readdirSync(dir).filter((n) => n.endsWith('.json') && !n.startsWith('.'));
const groupMessages = async () =>
  (await (await fetch(`${sandboxUrl}/sandbox/api/state`)).json()).chats.find((c) => c.id === LEADS_CHAT).messages;
const bodiesOf = (requestId) => received.filter((r) => r.body.request_id === requestId);
const killed = (child, signal) => {
  const exited = new Promise((r) => child.once('exit', r));
  child.kill(signal);
  return exited;
};

describe('the spool, end to end', () => {
  it('503 → "sent" and the fallback message; on disk before the answer; SIGKILL, restart; replayed with `late`; file gone', async () => {
    const dir = newSpoolDir();
    statuses.set('/a/leads', 503);
    const first = await startLanding('/a/leads', dir);
    const fields = { name: 'Поля Спулова', telegram: '@polya_spool', phone: '+7 999 444-55-66', comment: 'Сервер лежит' };
    const { requestId, state } = await submitForm(first.url, fields);
    assert.equal(state, 'sent');
    const message = (await groupMessages()).find((m) => m.text.includes(`request_id ${requestId}`));
    assert.ok(message, 'the fallback message is in the group');
    assert.match(message.text, /^⚠️ Запасной канал/);
    // Written before the visitor got "sent": it is there now, readable by the landing's user only.
    const [name] = entriesIn(dir);
    assert.match(name, new RegExp(`^\\d{13}-${requestId}\\.json$`));
    assert.equal(statSync(join(dir, name)).mode & 0o777, 0o600);

    // Killed before the replay could run (the first one waits 5 s): nothing is lost.
    await killed(first.child, 'SIGKILL');
    assert.deepEqual(entriesIn(dir), [name]);
    assert.equal(JSON.parse(readFileSync(join(dir, '.lock'), 'utf8')).pid, first.child.pid);
    assert.equal(bodiesOf(requestId).length, 1);

    statuses.set('/a/leads', 201);
    const second = await startLanding('/a/leads', dir);
    assert.match(second.child.output, new RegExp(`took over the lock of pid ${first.child.pid}`));
    await waitUntil(() => bodiesOf(requestId).length === 2, 20000, 'the replay');
    const [sent, replayed] = bodiesOf(requestId);
    assert.equal(replayed.path, '/a/leads');
    assert.equal(replayed.secret, SECRET);
    const { late, ...rest } = replayed.body;
    assert.deepEqual(rest, sent.body);
    assert.deepEqual(rest, {
      request_id: requestId,
      name: 'Поля Спулова',
      telegram: '@polya_spool',
      phone: '+79994445566',
      comment: 'Сервер лежит',
      client_ip: '127.0.0.1',
    });
    assert.equal(late.route, 'fallback');
    assert.equal(late.reason, '503');
    assert.match(late.submitted_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.equal(late.fallback.chat_id, String(LEADS_CHAT));
    assert.equal(late.fallback.message_id, message.message_id);
    assert.ok(Date.parse(late.fallback.sent_at) >= Date.parse(late.submitted_at));

    await waitUntil(() => entriesIn(dir).length === 0, 5000, 'the spool file to be deleted');
    // The replay counts the request and logs it once its file is removed for good (the removal's directory sync comes
    // after the file is gone from the listing): wait for that line, then read the metrics.
    await waitUntil(() => second.child.output.includes(`[spool] ${requestId} replayed → 201`), 5000, 'the replay log line');
    const metrics = await (await fetch(`${second.url}/metrics`)).text();
    assert.match(metrics, /^landing_spool_depth 0$/m);
    assert.match(metrics, /^landing_spool_replayed_total 1$/m);
    // No personal data in the landing's log.
    for (const pii of ['Поля', 'polya_spool', '4445566']) assert.ok(!second.child.output.includes(pii), pii);
    assert.equal(bodiesOf(requestId).length, 2, 'replayed once');
  });

  it('two landings with two spool directories each replay only their own', async () => {
    const [dirB, dirC] = [newSpoolDir(), newSpoolDir()];
    statuses.set('/b/leads', 503);
    statuses.set('/c/leads', 503);
    const [b, c] = await Promise.all([startLanding('/b/leads', dirB), startLanding('/c/leads', dirC)]);
    const fromB = await submitForm(b.url, { name: 'Бэ Первая', telegram: '@bee_first', phone: '+79990000001' });
    const fromC = await submitForm(c.url, { name: 'Цэ Вторая', telegram: '@cee_second', phone: '+79990000002' });
    assert.deepEqual([fromB.state, fromC.state], ['sent', 'sent']);
    assert.equal(entriesIn(dirB).length, 1);
    assert.equal(entriesIn(dirC).length, 1);
    statuses.set('/b/leads', 201);
    statuses.set('/c/leads', 201);
    await waitUntil(() => entriesIn(dirB).length === 0 && entriesIn(dirC).length === 0, 20000, 'both spools to be replayed');
    assert.deepEqual(
      bodiesOf(fromB.requestId).map((r) => [r.path, Boolean(r.body.late)]),
      [
        ['/b/leads', false],
        ['/b/leads', true],
      ],
    );
    assert.deepEqual(
      bodiesOf(fromC.requestId).map((r) => [r.path, Boolean(r.body.late)]),
      [
        ['/c/leads', false],
        ['/c/leads', true],
      ],
    );
  });

  it('a second landing on a spool directory in use does not start, with one line', async () => {
    const dir = newSpoolDir();
    const owner = await startLanding('/d/leads', dir);
    const second = await startLanding('/d/leads', dir, { wait: false });
    const exited = () => second.child.exitCode !== null && second.child.stdout.readableEnded && second.child.stderr.readableEnded;
    await waitUntil(exited, 15000, 'the second landing to exit');
    assert.equal(second.child.exitCode, 1);
    const lines = second.child.output.split('\n').filter((l) => l.startsWith('spool error:'));
    assert.equal(lines.length, 1, second.child.output);
    assert.match(lines[0], new RegExp(`is in use by another landing process \\(pid ${owner.child.pid}\\)`));
    // The owner is untouched and still holds the lock; stopped with SIGTERM, it gives the lock back.
    assert.equal(JSON.parse(readFileSync(join(dir, '.lock'), 'utf8')).pid, owner.child.pid);
    await killed(owner.child, 'SIGTERM');
    assert.ok(!readdirSync(dir).includes('.lock'));
  });
});
