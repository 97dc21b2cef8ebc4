// The built landing as a process, over real HTTP, with a stand-in for POST /leads: which address it sends as the
// visitor's (TRUST_PROXY), the request body limit, a retry after an error and a page whose form token is too old or
// from before the deploy (in a browser), and the configurations it refuses to start with.
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { createServer } from 'node:http';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { chromium } from 'playwright-core';
import { CHROMIUM, CHROMIUM_ARGS, root, startLanding as startStackLanding, waitForHttp, waitUntil } from './stack.mjs';

const SECRET = 'hardening-secret-0123456789';
const LIMIT = 64 * 1024;
let stand;
let standUrl;
const received = [];
const landings = [];
/** Statuses the stand-in answers with, one per request; 201 when empty. */
const standStatuses = [];

before(async () => {
  stand = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      received.push(JSON.parse(body));
      const status = standStatuses.shift() ?? 201;
      const answer = status === 201 ? { lead_number: 1, duplicate: false, repeat: false } : {};
      res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(answer));
    });
  });
  await new Promise((r) => stand.listen(0, '127.0.0.1', r));
  standUrl = `http://127.0.0.1:${stand.address().port}`;
});
after(async () => {
  for (const child of landings) if (child.exitCode === null) child.kill('SIGTERM');
  await Promise.all(landings.map((c) => (c.exitCode !== null ? null : new Promise((r) => c.once('exit', r)))));
  stand.closeAllConnections();
  await new Promise((r) => stand.close(r));
});

function startLanding(env) {
  return startStackLanding(env, { wait: false, onStart: (child) => landings.push(child) });
}

async function startConfiguredLanding(env = {}) {
  const landing = await startLanding({ LEADS_ENDPOINT: `${standUrl}/leads`, LEADS_SECRET: SECRET, MIN_FILL_MS: '0', ...env });
  await waitForHttp(`${landing.url}/health`, landing.child, 'landing');
  return landing;
}

/** Types a visitor's name, username and phone into the form on `page`. */
async function fill(page, name, telegram, phone) {
  await page.getByLabel('Имя').fill(name);
  await page.getByLabel('Ник в Telegram').fill(telegram);
  await page.getByLabel('Телефон').fill(phone);
}

/** A person's submission without JavaScript: the page, then its form posted back, as a proxy would forward it. */
async function submitForm(url, forwardedFor) {
  const page = await (await fetch(url)).text();
  const requestId = /name="requestId" value="([^"]+)"/.exec(page)[1];
  const startedAt = /name="startedAt" value="([^"]+)"/.exec(page)[1];
  const fields = { company: '', name: 'Анна Ким', telegram: '@anna_k', phone: '+79991234567' };
  const form = new URLSearchParams({ requestId, startedAt, ...fields });
  const headers = { 'Content-Type': 'application/x-www-form-urlencoded' };
  if (forwardedFor) headers['X-Forwarded-For'] = forwardedFor;
  const res = await fetch(`${url}/?index`, { method: 'POST', headers, body: form });
  const html = await res.text();
  return { requestId, state: /role="(?:status|alert)" data-state="(\w+)"/.exec(html)?.[1] };
}

/** Writes `head` (and then `chunks`) on a raw connection; resolves with the first response line. */
function rawRequest(port, head, chunks = []) {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    socket.setTimeout(10000, () => {
      socket.destroy();
      reject(new Error(`no answer in 10 s; got: ${JSON.stringify(answer.slice(0, 200))}`));
    });
    let answer = '';
    socket.on('data', (d) => {
      answer += d;
      if (answer.includes('\r\n\r\n')) {
        socket.destroy();
        resolve({ statusLine: answer.split('\r\n')[0], head: answer.split('\r\n\r\n')[0] });
      }
    });
    socket.on('error', reject);
    socket.on('connect', () => {
      socket.write(head);
      for (const chunk of chunks) socket.write(chunk);
    });
  });
}

describe('the visitor address', () => {
  it('TRUST_PROXY unset: a rotating X-Forwarded-For spends one socket address quota, and client_ip is that address', async () => {
    const landing = await startConfiguredLanding();
    received.length = 0;
    const states = [];
    for (let i = 1; i <= 7; i += 1) states.push((await submitForm(landing.url, `203.0.113.${i}`)).state);
    assert.deepEqual(states, ['sent', 'sent', 'sent', 'sent', 'sent', 'throttled', 'throttled']);
    assert.deepEqual(
      received.map((b) => b.client_ip),
      Array(5).fill('127.0.0.1'),
    );
  });

  it('TRUST_PROXY=1: the hop our proxy appended is the visitor, in the spellings proxies use, or no client_ip', async () => {
    const landing = await startConfiguredLanding({ TRUST_PROXY: '1' });
    received.length = 0;
    for (const hop of ['6.6.6.6, 198.51.100.7:5678', '[2001:db8::1]:443', 'unknown']) {
      assert.equal((await submitForm(landing.url, hop)).state, 'sent');
    }
    assert.deepEqual(
      received.map((b) => b.client_ip),
      ['198.51.100.7', '2001:db8::1', undefined],
    );
  });
});

describe('the request body limit', () => {
  let landing;
  before(async () => {
    landing = await startConfiguredLanding();
  });

  it('a declared Content-Length over the limit: 413 before a byte of the body is sent', async () => {
    const head = 'POST /?index HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 300000000\r\n\r\n';
    const { statusLine, head: responseHead } = await rawRequest(landing.port, head);
    assert.equal(statusLine, 'HTTP/1.1 413 Payload Too Large');
    assert.match(responseHead, /\r\nConnection: close/i);
  });

  it('Expect: 100-continue with a body over the limit: 413 instead of 100 Continue', async () => {
    const head = `POST /?index HTTP/1.1\r\nHost: x\r\nContent-Length: 300000000\r\nExpect: 100-continue\r\n\r\n`;
    assert.equal((await rawRequest(landing.port, head)).statusLine, 'HTTP/1.1 413 Payload Too Large');
  });

  it('a chunked body: cut off with 413 as soon as it passes the limit, without waiting for its end', async () => {
    const head = 'POST /?index HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n';
    const piece = 'a'.repeat(8 * 1024);
    // Just over the limit, and the body never ends (no terminating chunk): only a cut-off can answer.
    const chunks = Array.from({ length: LIMIT / piece.length + 1 }, () => `${piece.length.toString(16)}\r\n${piece}\r\n`);
    assert.equal((await rawRequest(landing.port, head, chunks)).statusLine, 'HTTP/1.1 413 Payload Too Large');
  });

  it('the landing still serves after refusing: a form under the limit is delivered', async () => {
    received.length = 0;
    const { requestId, state } = await submitForm(landing.url);
    assert.equal(state, 'sent');
    assert.equal(received[0].request_id, requestId);
  });
});

describe('a retry after an error, in a browser', () => {
  let browser;
  let landing;
  before(async () => {
    landing = await startConfiguredLanding();
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  });
  after(async () => {
    await browser?.close();
  });

  for (const javaScriptEnabled of [true, false]) {
    it(`keeps the request id and its token, so the retry is delivered (JavaScript ${javaScriptEnabled ? 'on' : 'off'})`, async () => {
      const context = await browser.newContext({ javaScriptEnabled });
      const page = await context.newPage();
      await page.goto(landing.url);
      await fill(page, 'Рита Повторова', '@rita_retry', '+79990001122');
      received.length = 0;
      // The server fails and no Telegram fallback is configured: the visitor sees the error, values kept.
      standStatuses.push(500);
      await page.getByRole('button', { name: 'Отправить заявку' }).click();
      await page.locator('[data-state="error"]').waitFor({ timeout: 10000 });
      assert.equal(await page.getByLabel('Имя').inputValue(), 'Рита Повторова');
      await page.getByRole('button', { name: 'Отправить заявку' }).click();
      await page.locator('[data-state="sent"]').waitFor({ timeout: 10000 });
      await waitUntil(() => received.length === 2, 5000, 'the retry to reach the server');
      assert.equal(received[1].request_id, received[0].request_id);
      await context.close();
    });
  }

  // With JavaScript, a post that never reaches the action at all.
  const failures = {
    'a refused connection (the landing restarting)': (route) => route.abort('connectionrefused'),
    "a proxy's 502 page": (route) => route.fulfill({ status: 502, contentType: 'text/html', body: '<h1>502 Bad Gateway</h1>' }),
  };
  for (const [what, fail] of Object.entries(failures)) {
    it(`${what}: the error, everything typed kept, and sending again delivers it once`, async () => {
      const context = await browser.newContext();
      const page = await context.newPage();
      await page.goto(landing.url);
      await page.waitForLoadState('networkidle');
      await fill(page, 'Сеть Обрывова', '@net_down', '+79990001144');
      received.length = 0;
      await page.route(
        (url) => url.origin === landing.url,
        (route) => (route.request().method() === 'POST' ? fail(route) : route.fallback()),
      );
      await page.getByRole('button', { name: 'Отправить заявку' }).click();
      await page.locator('[data-state="error"]').waitFor({ timeout: 10000 });
      assert.equal(await page.getByLabel('Имя').inputValue(), 'Сеть Обрывова');
      assert.equal(received.length, 0);
      await page.unrouteAll();
      await page.getByRole('button', { name: 'Отправить заявку' }).click();
      await page.locator('[data-state="sent"]').waitFor({ timeout: 10000 });
      assert.equal(received.length, 1);
      await context.close();
    });
  }

  // Nothing reaches the landing at all, not the post and not the page's data after it: the visitor's phone lost its
  // network, or the landing is down for a deploy. Each on a landing of its own (the tests above used up the visitor's
  // 5 requests in 10 minutes on theirs).
  const outages = {
    'the visitor offline': async (page) => {
      await page.context().setOffline(true);
      return () => page.context().setOffline(false);
    },
    'the landing down (every request refused)': async (page, url) => {
      const refuse = (u) => u.origin === url;
      await page.route(refuse, (route) => route.abort('connectionrefused'));
      return () => page.unroute(refuse);
    },
  };
  for (const [what, cut] of Object.entries(outages)) {
    it(`${what}: the error with everything typed, not an error page, and sending again delivers it once`, async () => {
      const own = await startConfiguredLanding();
      const context = await browser.newContext();
      const page = await context.newPage();
      await page.goto(own.url);
      await page.waitForLoadState('networkidle');
      await fill(page, 'Метро Тоннелева', '@metro_tunnel', '+79990001155');
      await page.getByLabel('Что хотите получить').fill('Набор к свадьбе');
      received.length = 0;
      const restore = await cut(page, own.url);
      await page.getByRole('button', { name: 'Отправить заявку' }).click();
      await page.locator('[data-state="error"]').waitFor({ timeout: 10000 });
      assert.equal(await page.getByLabel('Имя').inputValue(), 'Метро Тоннелева');
      assert.equal(await page.getByLabel('Что хотите получить').inputValue(), 'Набор к свадьбе');
      assert.equal(received.length, 0);
      await restore();
      await page.getByRole('button', { name: 'Отправить заявку' }).click();
      await page.locator('[data-state="sent"]').waitFor({ timeout: 10000 });
      assert.equal(received.length, 1);
      assert.equal(received[0].comment, 'Набор к свадьбе');
      await context.close();
    });
  }
});

describe('a browser that blocks site data (cookies and storage)', () => {
  let landing;
  let profile;
  before(async () => {
    landing = await startConfiguredLanding();
    // Chromium's own setting "Block all site data": reading window.localStorage throws a SecurityError.
    profile = mkdtempSync(join(tmpdir(), 'blocked-profile-'));
    mkdirSync(join(profile, 'Default'));
    writeFileSync(join(profile, 'Default', 'Preferences'), JSON.stringify({ profile: { default_content_setting_values: { cookies: 2 } } }));
  });
  after(() => rmSync(profile, { recursive: true, force: true }));

  it('still has its form after the scripts start, and sends it', async () => {
    const context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    try {
      const page = context.pages()[0] ?? (await context.newPage());
      await page.goto(landing.url);
      assert.equal(
        await page.evaluate(() => {
          try {
            return typeof window.localStorage;
          } catch (err) {
            return err.name;
          }
        }),
        'SecurityError',
      );
      await page.waitForLoadState('networkidle');
      await fill(page, 'Блок Хранилищев', '@blocked_storage', '+79990001133');
      received.length = 0;
      await page.getByRole('button', { name: 'Отправить заявку' }).click();
      await page.locator('[data-state="sent"]').waitFor({ timeout: 10000 });
      assert.equal(received.length, 1);
    } finally {
      await context.close();
    }
  });
});

/** The landing's form-token key, as it derives it from LEADS_SECRET. */
const FORM_KEY = createHmac('sha256', SECRET).update('stickers-landing:startedAt').digest();
const DAY_MS = 24 * 60 * 60 * 1000;
/** The format pages carried before tokens were bound to the request id: the HMAC of the time alone. */
const preDeployToken = (t) => `${t}.${createHmac('sha256', FORM_KEY).update(String(t)).digest('base64url')}`;
const OLD_TOKENS = {
  // Signed by the landing's key for the page's request id, but older than the maximum age (24 h).
  'an expired token': (requestId) => {
    const t = Date.now() - DAY_MS - 60_000;
    return `${t}.${createHmac('sha256', FORM_KEY).update(`${t}.${requestId}`).digest('base64url')}`;
  },
  'a pre-deploy token past the maximum age': () => preDeployToken(Date.now() - DAY_MS - 60_000),
};

/** Opens the landing in a new browser context with the page's form token replaced by `oldToken(requestId)`. */
let visitor = 0;
async function openWithToken(browser, url, javaScriptEnabled, oldToken) {
  // Each browser is another visitor (behind one trusted proxy), so the per-visitor limit never gets in the way.
  const extraHTTPHeaders = { 'X-Forwarded-For': `198.51.100.${++visitor}` };
  const context = await browser.newContext({ javaScriptEnabled, extraHTTPHeaders });
  const page = await context.newPage();
  const seen = {};
  // The page as it was rendered long ago: its token (in the form and in the page's data) replaced by an old one.
  await page.route(`${url}/`, async (route) => {
    const response = await route.fetch();
    const html = await response.text();
    seen.requestId = /name="requestId" value="([^"]+)"/.exec(html)[1];
    const token = /name="startedAt" value="([^"]+)"/.exec(html)[1];
    seen.token = oldToken(seen.requestId);
    await route.fulfill({ response, body: html.replaceAll(token, seen.token) });
  });
  await page.goto(url);
  assert.equal(await page.locator('input[name="startedAt"]').inputValue(), seen.token);
  return { context, page, requestId: seen.requestId };
}

describe('a page whose form token is too old or from before the deploy, in a browser', () => {
  let browser;
  let landing;
  before(async () => {
    // A minimum fill time of a minute: sending again at once passes only because the fresh token accounts for it.
    landing = await startConfiguredLanding({ MIN_FILL_MS: '60000', TRUST_PROXY: '1' });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  });
  after(async () => {
    await browser?.close();
  });

  for (const [kind, oldToken] of Object.entries(OLD_TOKENS)) {
    for (const javaScriptEnabled of [true, false]) {
      it(`${kind}: the visitor is asked to send again, values kept, and the request is delivered once (JavaScript ${javaScriptEnabled ? 'on' : 'off'})`, async () => {
        const { context, page, requestId: pageRequestId } = await openWithToken(browser, landing.url, javaScriptEnabled, oldToken);
        await fill(page, 'Вера Долгова', '@vera_later', '+79990003344');
        await page.getByLabel('Что хотите получить').fill('Открыла вчера, отправляю сегодня');
        received.length = 0;
        await page.getByRole('button', { name: 'Отправить заявку' }).click();

        const message = page.locator('[data-state="expired"]');
        await message.waitFor({ timeout: 10000 });
        assert.equal(await message.getAttribute('role'), 'alert');
        assert.equal(
          (await message.textContent()).trim(),
          'Форма долго была открыта — проверьте данные и нажмите «Отправить заявку» ещё раз.',
        );
        // Next to the button: the message is the element right before it.
        assert.equal(await page.locator('[data-state="expired"] + button[type="submit"]').count(), 1);
        assert.equal(await page.getByLabel('Имя').inputValue(), 'Вера Долгова');
        assert.equal(await page.getByLabel('Что хотите получить').inputValue(), 'Открыла вчера, отправляю сегодня');
        assert.equal(await page.locator('input[name="requestId"]').inputValue(), pageRequestId);
        assert.equal(received.length, 0, 'nothing is delivered with the old token');

        await page.getByRole('button', { name: 'Отправить заявку' }).click();
        await page.locator('[data-state="sent"]').waitFor({ timeout: 10000 });
        await waitUntil(() => received.length >= 1, 5000, 'the request to reach the server');
        assert.deepEqual(
          received.map((b) => [b.request_id, b.name, b.comment]),
          [[pageRequestId, 'Вера Долгова', 'Открыла вчера, отправляю сегодня']],
        );
        await context.close();
      });
    }
  }

  for (const javaScriptEnabled of [true, false]) {
    it(`a pre-deploy token within the maximum age: delivered at the first press, as before the deploy (JavaScript ${javaScriptEnabled ? 'on' : 'off'})`, async () => {
      const { context, page, requestId } = await openWithToken(browser, landing.url, javaScriptEnabled, () =>
        preDeployToken(Date.now() - 60_000),
      );
      await fill(page, 'Ольга Раньшева', '@olga_before', '+79990007788');
      received.length = 0;
      await page.getByRole('button', { name: 'Отправить заявку' }).click();
      await page.locator('[data-state="sent"]').waitFor({ timeout: 10000 });
      await waitUntil(() => received.length >= 1, 5000, 'the request to reach the server');
      assert.deepEqual(
        received.map((b) => [b.request_id, b.name]),
        [[requestId, 'Ольга Раньшева']],
      );
      await context.close();
    });
  }
});

describe('configurations the landing refuses to start with', () => {
  it('production without a build: exits 2 with one line saying to build, not a stack trace', () => {
    // The landing's own server.mjs beside no build (inside landing/, so that its packages resolve).
    const dir = mkdtempSync(join(root, 'landing', '.unbuilt-'));
    try {
      copyFileSync(join(root, 'landing', 'server.mjs'), join(dir, 'server.mjs'));
      const run = spawnSync(process.execPath, [join(dir, 'server.mjs')], {
        env: { ...process.env, NODE_ENV: 'production' },
        encoding: 'utf8',
      });
      assert.deepEqual(
        [run.status, run.stdout, run.stderr],
        [2, '', 'the landing is not built (no landing/build/server/index.js): run npm run build first\n'],
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  const configured = { LEADS_ENDPOINT: 'http://127.0.0.1:9/leads', LEADS_SECRET: SECRET };
  for (const [what, env, line] of [
    ['production with neither the server nor Telegram', {}, 'config error: in production set LEADS_ENDPOINT and LEADS_SECRET, or'],
    ['TRUST_PROXY=true', { ...configured, TRUST_PROXY: 'true' }, 'config error: TRUST_PROXY must be'],
    // The stand-in server holds the port: the line names PORT, not a stack trace.
    ['a PORT in use', () => ({ ...configured, PORT: new URL(standUrl).port }), 'config error: PORT='],
  ]) {
    it(`${what}: exits 1 with one line`, async () => {
      const { child } = await startLanding(typeof env === 'function' ? env() : env);
      const exited = () => child.exitCode !== null && child.stdout.readableEnded && child.stderr.readableEnded;
      await waitUntil(exited, 15000, 'the landing to exit');
      assert.equal(child.exitCode, 1);
      const errors = child.output.split('\n').filter((l) => l.startsWith('config error:'));
      assert.equal(errors.length, 1, child.output);
      assert.ok(errors[0].startsWith(line), errors[0]);
    });
  }
});
