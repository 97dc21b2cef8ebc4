// The built landing as a process, over real HTTP, with a stand-in for POST /leads: which address it sends as the
// visitor's (TRUST_PROXY), the request body limit, and the configurations it refuses to start with.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { connect } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { chromium } from 'playwright-core';
import { CHROMIUM, CHROMIUM_ARGS, freePort, root, run, waitForHttp, waitUntil } from './stack.mjs';

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
  return freePort().then((port) => {
    const processEnv = { NODE_ENV: 'production', PORT: String(port), HOST: '127.0.0.1', ...env };
    const child = run('landing', ['server.mjs'], processEnv, join(root, 'landing'));
    landings.push(child);
    return { child, url: `http://127.0.0.1:${port}`, port };
  });
}

async function startConfiguredLanding(env = {}) {
  const landing = await startLanding({ LEADS_ENDPOINT: `${standUrl}/leads`, LEADS_SECRET: SECRET, MIN_FILL_MS: '0', ...env });
  await waitForHttp(`${landing.url}/health`, landing.child, 'landing');
  return landing;
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
    assert.deepEqual(received.map((b) => b.client_ip), Array(5).fill('127.0.0.1'));
  });

  it('TRUST_PROXY=1: the hop our proxy appended is the visitor, in the spellings proxies use, or no client_ip', async () => {
    const landing = await startConfiguredLanding({ TRUST_PROXY: '1' });
    received.length = 0;
    for (const hop of ['6.6.6.6, 198.51.100.7:5678', '[2001:db8::1]:443', 'unknown']) {
      assert.equal((await submitForm(landing.url, hop)).state, 'sent');
    }
    assert.deepEqual(received.map((b) => b.client_ip), ['198.51.100.7', '2001:db8::1', undefined]);
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
      await page.getByLabel('Имя').fill('Рита Повторова');
      await page.getByLabel('Ник в Telegram').fill('@rita_retry');
      await page.getByLabel('Телефон').fill('+79990001122');
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
});

describe('configurations the landing refuses to start with', () => {
  const configured = { LEADS_ENDPOINT: 'http://127.0.0.1:9/leads', LEADS_SECRET: SECRET };
  for (const [what, env, line] of [
    ['production with neither the server nor Telegram', {}, 'config error: in production set LEADS_ENDPOINT and LEADS_SECRET, or'],
    ['TRUST_PROXY=true', { ...configured, TRUST_PROXY: 'true' }, 'config error: TRUST_PROXY must be'],
  ]) {
    it(`${what}: exits 1 with one line`, async () => {
      const { child } = await startLanding(env);
      const exited = () => child.exitCode !== null && child.stdout.readableEnded && child.stderr.readableEnded;
      await waitUntil(exited, 15000, 'the landing to exit');
      assert.equal(child.exitCode, 1);
      const errors = child.output.split('\n').filter((l) => l.startsWith('config error:'));
      assert.equal(errors.length, 1, child.output);
      assert.ok(errors[0].startsWith(line), errors[0]);
    });
  }
});
