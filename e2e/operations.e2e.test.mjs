// Run it like a product: graceful shutdown under load, the trace command, and `npm run dev` end to end (and with a
// port taken).
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { chromium } from 'playwright-core';
import { CHROMIUM, CHROMIUM_ARGS, SECRET, freePort, root, startStack, waitUntil } from './stack.mjs';

const stacks = [];
after(async () => {
  for (const s of stacks) await s.stop();
});

function leadBody(i) {
  return {
    request_id: crypto.randomUUID(),
    name: 'Нагрузка Тест',
    telegram: `@load_user_${i}`,
    phone: `+7900${String(i).padStart(7, '0')}`,
    client_ip: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`,
  };
}

describe('graceful shutdown', () => {
  it('SIGTERM under load: the server drains, exits 0, and every acknowledged lead is in the database', async () => {
    const stack = await startStack({ serverEnv: { LEADS_IP_LIMIT: '1000000', LEADS_HOURLY_LIMIT: '1000000' } });
    stacks.push(stack);
    const acknowledged = new Set();
    let refused = 0;
    let i = 0;
    let stop = false;
    const client = async () => {
      while (!stop) {
        const body = leadBody(++i);
        try {
          const res = await fetch(`${stack.serverUrl}/leads`, {
            method: 'POST',
            headers: { 'Content-Type': 'application/json', 'X-Stickers-Leads-Secret': SECRET },
            body: JSON.stringify(body),
          });
          if (res.status === 201 || res.status === 200) acknowledged.add(body.request_id);
          else assert.fail(`unexpected ${res.status}: ${await res.text()}`);
        } catch {
          refused += 1; // connection refused or reset once the server stopped listening
          await new Promise((r) => setTimeout(r, 5));
        }
      }
    };
    const clients = Array.from({ length: 16 }, client);
    // Under load: SIGTERM comes once leads are being acknowledged, with 16 requests in flight.
    await waitUntil(async () => acknowledged.size >= 150, 15000, 'load: 150 acknowledged leads');
    const server = stack.processes.server;
    const exited = new Promise((r) => server.once('exit', (code, signal) => r({ code, signal })));
    server.kill('SIGTERM');
    const result = await exited;
    stop = true;
    await Promise.all(clients);
    assert.deepEqual(result, { code: 0, signal: null }, server.output);
    const db = new Database(stack.dbPath, { readonly: true });
    const stored = new Set(db.prepare('select request_id from leads').pluck().all());
    db.close();
    const lost = [...acknowledged].filter((id) => !stored.has(id));
    assert.deepEqual(lost, [], `${lost.length} acknowledged leads missing`);
    assert.doesNotMatch(server.output, /"level":"error"/);
    assert.match(server.output, /"msg":"shutting down: no new connections, draining requests in flight","signal":"SIGTERM"/);
    console.log(`acknowledged ${acknowledged.size}, refused after SIGTERM ${refused}, stored ${stored.size}`);
  });
});

describe('trace command', () => {
  it('npm run leads -- trace prints the story, or says to check the fallback channel', async () => {
    const stack = await startStack();
    stacks.push(stack);
    const body = leadBody(1);
    const res = await fetch(`${stack.serverUrl}/leads`, {
      method: 'POST',
      headers: { 'X-Stickers-Leads-Secret': SECRET },
      body: JSON.stringify(body),
    });
    const { lead_number } = await res.json();
    await waitUntil(async () => (await stack.cards()).length === 1, 5000, 'the card');
    const run = (key) =>
      spawnSync('npm', ['run', '--silent', 'leads', '--', 'trace', key], {
        cwd: root,
        env: { ...process.env, DATABASE_PATH: stack.dbPath },
        encoding: 'utf8',
      });
    const found = run(body.request_id);
    assert.equal(found.status, 0, found.stderr);
    assert.match(found.stdout, new RegExp(`lead #${lead_number}`));
    assert.match(found.stdout, /card\s+published .* in chat -1001000000001, message 1/);
    const missing = run(crypto.randomUUID());
    assert.equal(missing.status, 1);
    assert.match(missing.stdout, /not in the database: check the fallback channel/);
  });
});

describe('npm run dev', () => {
  it('starts sandbox, server and landing, takes a lead through the form to a card, and stops on Ctrl-C', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'leads-dev-'));
    const ports = { sandbox: await freePort(), server: await freePort(), landing: await freePort() };
    const startedSec = Math.floor(Date.now() / 1000);
    const dev = spawn('npm', ['run', 'dev'], {
      cwd: root,
      detached: true,
      env: {
        ...process.env,
        SANDBOX_PORT: String(ports.sandbox),
        PORT: String(ports.server),
        LANDING_PORT: String(ports.landing),
        DATABASE_PATH: join(dir, 'leads.sqlite'),
        // Its own spool: what a request left in the working copy's spool is not this run's to replay.
        LANDING_SPOOL_DIR: join(dir, 'spool'),
        MIN_FILL_MS: '500',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    dev.stdout.on('data', (d) => (output += d));
    dev.stderr.on('data', (d) => (output += d));
    const landingUrl = `http://127.0.0.1:${ports.landing}/`;
    try {
      await waitUntil(
        async () => output.includes(`landing:          http://localhost:${ports.landing}/`),
        120000,
        `the printed URLs:\n${output}`,
      );
      // The URLs are printed once every part answers.
      for (const url of [
        `http://127.0.0.1:${ports.sandbox}/sandbox/api/state`,
        `http://127.0.0.1:${ports.server}/health`,
        `${landingUrl}health`,
      ]) {
        const res = await fetch(url).catch((err) => err);
        assert.equal(res.status, 200, `${url} when the URLs were printed: ${res}`);
      }
      assert.match(output, /leads server listening/);
      assert.ok(output.includes(`the CLI on it:    DATABASE_PATH=${join(dir, 'leads.sqlite')} LEADS_IP_SALT=dev-salt-not-for-production`));
      const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
      try {
        const page = await browser.newPage();
        const sockets = [];
        page.on('websocket', (ws) => sockets.push(new URL(ws.url()).port));
        await page.goto(landingUrl);
        // Development mode: let Vite finish loading (and any first-run reload) before typing.
        await page.waitForLoadState('networkidle');
        // Hot reload on the landing's own port (LANDING_PORT), not a fixed one a second working copy's would hold.
        await waitUntil(async () => sockets.length > 0, 10000, 'the hot reload websocket');
        assert.deepEqual([...new Set(sockets)], [String(ports.landing)]);
        await page.waitForTimeout(500);
        await page.getByLabel('Имя').fill('Дев Режим');
        await page.getByLabel('Ник в Telegram').fill('@dev_mode_user');
        await page.getByLabel('Телефон').fill('+79998887766');
        await page.waitForTimeout(800);
        await page.getByRole('button', { name: 'Отправить заявку' }).click();
        await page.locator('[data-state="sent"]').waitFor({ timeout: 20000 });
      } finally {
        await browser.close();
      }
      const card = await waitUntil(
        async () => {
          const state = await (await fetch(`http://127.0.0.1:${ports.sandbox}/sandbox/api/state`)).json();
          return state.chats[0].messages.find((m) => m.text.includes('Дев Режим'));
        },
        15000,
        'the card on the sandbox',
      );
      assert.match(card.text, /^🆕 Заявка #1\n/);
      // The sandbox forgets its chats on a restart, the database keeps its cards: this run's message ids start at its
      // start in seconds, past any earlier run's, so no card of an earlier run names a message of this one.
      assert.ok(card.message_id >= startedSec && card.message_id <= Math.floor(Date.now() / 1000), `message ${card.message_id}`);

      // A second `npm run dev` in the same working copy (its own ports, database and spool): one line saying so,
      // nothing rebuilt under the first. It rebuilt shared/ and sandbox/ under the first, and its nest emptied
      // server/dist, which restarted the first's server.
      const builds = ['shared/dist', 'sandbox/dist'].map((d) => join(root, d));
      const before = builds.map((d) => statSync(d).ino);
      const second = spawnSync('npm', ['run', '--silent', 'dev'], {
        cwd: root,
        encoding: 'utf8',
        timeout: 60000,
        env: {
          ...process.env,
          SANDBOX_PORT: String(await freePort()),
          PORT: String(await freePort()),
          LANDING_PORT: String(await freePort()),
          DATABASE_PATH: join(dir, 'second.sqlite'),
          LANDING_SPOOL_DIR: join(dir, 'second-spool'),
        },
      });
      assert.equal(second.status, 1, second.stdout + second.stderr);
      assert.equal(second.stdout, '');
      assert.match(
        second.stderr,
        /^npm run dev is already running in this working copy \(pid \d+\): stop it first \(Ctrl-C where it runs\); a second one would rebuild the first's server\/dist, shared\/dist and sandbox\/dist under it\n$/,
      );
      assert.deepEqual(
        builds.map((d) => statSync(d).ino),
        before,
        'shared/dist or sandbox/dist was rebuilt',
      );
    } finally {
      const exited = new Promise((r) => dev.once('exit', (code) => r(code)));
      process.kill(-dev.pid, 'SIGINT');
      const code = await Promise.race([exited, new Promise((r) => setTimeout(() => r('timeout'), 15000))]);
      if (code === 'timeout') process.kill(-dev.pid, 'SIGKILL');
      assert.notEqual(code, 'timeout', `npm run dev did not stop on Ctrl-C:\n${output}`);
      for (const port of Object.values(ports)) {
        const up = await fetch(`http://127.0.0.1:${port}/`).then(
          () => true,
          () => false,
        );
        assert.equal(up, false, `port ${port} still answers after Ctrl-C`);
      }
      rmSync(dir, { recursive: true, force: true });
    }
  });
  // The part whose port a `net` server holds, the variable that sets its port, and how the line names it.
  for (const part of [
    { name: 'server', variable: 'PORT', what: 'the leads server' },
    { name: 'landing', variable: 'LANDING_PORT', what: 'the landing' },
    { name: 'sandbox', variable: 'SANDBOX_PORT', what: 'the Telegram sandbox' },
  ]) {
    it(
      `with the ${part.name}'s port taken: one line naming the port and ${part.variable}, no URLs, nothing rebuilt, exit 1`,
      { timeout: 120000 },
      async () => {
        const dir = mkdtempSync(join(tmpdir(), 'leads-dev-taken-'));
        const ports = { SANDBOX_PORT: await freePort(), PORT: await freePort(), LANDING_PORT: await freePort() };
        const holder = createServer();
        await new Promise((resolve, reject) => {
          holder.once('error', reject);
          holder.listen(ports[part.variable], resolve);
        });
        // A second `npm run dev` beside a running one: it must not rebuild shared/ and sandbox/ under the first (its
        // server restarted on the rebuild, after pages of type errors while dist/ was gone).
        const builds = ['shared/dist', 'sandbox/dist'].map((dir) => join(root, dir));
        const before = builds.map((dir) => statSync(dir).ino);
        const dev = spawn('npm', ['run', '--silent', 'dev'], {
          cwd: root,
          detached: true,
          env: {
            ...process.env,
            ...Object.fromEntries(Object.entries(ports).map(([k, v]) => [k, String(v)])),
            DATABASE_PATH: join(dir, 'leads.sqlite'),
            LANDING_SPOOL_DIR: join(dir, 'spool'),
          },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let output = '';
        // Whichever comes first: dev ends (its streams closed), or it prints the URLs as if it were ready.
        const outcome = new Promise((resolve) => {
          const seen = (d) => {
            output += d;
            if (output.includes('Stickers Leads (development)')) resolve({ banner: true });
          };
          dev.stdout.on('data', seen);
          dev.stderr.on('data', seen);
          dev.once('close', (code, signal) => resolve({ code, signal }));
        });
        try {
          const result = await outcome;
          assert.deepEqual(result, { code: 1, signal: null }, output);
          assert.deepEqual(
            builds.map((dir) => statSync(dir).ino),
            before,
            'shared/dist or sandbox/dist was rebuilt',
          );
          const port = ports[part.variable];
          assert.equal(
            output,
            `npm run dev: port ${port} (${part.name}: ${part.what}) is already in use; choose another with ${part.variable}, e.g. ${part.variable}=${port + 10} npm run dev\n`,
          );
        } finally {
          if (dev.exitCode === null && dev.signalCode === null) {
            const gone = new Promise((r) => dev.once('close', r));
            process.kill(-dev.pid, 'SIGINT');
            await gone;
          }
          await new Promise((r) => holder.close(r));
          rmSync(dir, { recursive: true, force: true });
        }
      },
    );
  }
});
