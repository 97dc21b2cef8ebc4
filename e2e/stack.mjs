// Starts the real stack for end-to-end tests: the Telegram sandbox, the built server and the built landing, each
// on a free loopback port, with a fresh SQLite file. Everything is stopped by stop().
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const root = new URL('..', import.meta.url).pathname;
export const LEADS_CHAT = -1001000000001;
export const SECRET = 'e2e-secret-0123456789abcdef';
/** The stack's MIN_FILL_MS: a form sent sooner is taken for a bot's. */
export const MIN_FILL_MS = 500;

export async function freePort() {
  const server = createServer();
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address();
  await new Promise((r) => server.close(r));
  return port;
}

/** Resolves once `url` answers (any status below 500); fails when `child` exits first. */
export async function waitForHttp(url, child, name, timeoutMs = 30000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${name} exited with ${child.exitCode}:\n${child.output}`);
    try {
      const res = await fetch(url);
      if (res.status < 500) return;
    } catch {
      /* not up yet */
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${name} did not come up at ${url}:\n${child.output}`);
}

/**
 * Starts `node <args>` with only PATH and `env`; its output is kept on `child.output` for error messages.
 * A landing (`server.mjs`) started without LANDING_SPOOL_DIR gets a fresh spool directory of its own, removed when it
 * exits: landings started side by side must not share one (the second would refuse to start), nor the working copy's.
 */
export function run(name, args, env, cwd = root) {
  const ownSpool = args[0] === 'server.mjs' && env.LANDING_SPOOL_DIR === undefined ? tempSpoolDir() : null;
  const fullEnv = { PATH: process.env.PATH, ...(ownSpool ? { LANDING_SPOOL_DIR: ownSpool } : {}), ...env };
  const child = spawn(process.execPath, args, { cwd, env: fullEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  if (ownSpool) child.once('exit', () => rmSync(ownSpool, { recursive: true, force: true }));
  child.output = '';
  child.stdout.on('data', (d) => (child.output += d));
  child.stderr.on('data', (d) => (child.output += d));
  return child;
}

/** A new, empty directory for a landing's spool (LANDING_SPOOL_DIR); the caller removes it. */
export function tempSpoolDir() {
  return mkdtempSync(join(tmpdir(), 'landing-spool-e2e-'));
}

/**
 * The built landing in production mode on a free loopback port, started from `landing/`. Waits for its /health unless
 * `wait` is false (a test that expects it to refuse the start); `onStart` hands the child to the caller's cleanup.
 */
export async function startLanding(env, { name = 'landing', wait = true, onStart } = {}) {
  const port = await freePort();
  const processEnv = { NODE_ENV: 'production', PORT: String(port), HOST: '127.0.0.1', ...env };
  const child = run(name, ['server.mjs'], processEnv, join(root, 'landing'));
  onStart?.(child);
  const url = `http://127.0.0.1:${port}`;
  if (wait) await waitForHttp(`${url}/health`, child, name);
  return { child, url, port };
}

/**
 * The sandbox, the server and the landing, built, on free loopback ports. `linksToSandbox`: the "Continue in Telegram"
 * links point at the sandbox's stand-in for t.me (as `npm run dev` does), so a browser can open them.
 */
export async function startStack({ minFillMs = MIN_FILL_MS, serverEnv = {}, landingEnv = {}, linksToSandbox = false } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'leads-e2e-'));
  const [sandboxPort, serverPort] = [await freePort(), await freePort()];
  const token = '123456789:sandbox-token';
  // What has started so far: stopped again when a later part does not come up, so a failed start leaves nothing running.
  const children = [];
  const stopAll = async () => {
    for (const child of children) if (child.exitCode === null) child.kill('SIGTERM');
    await Promise.all(children.map((c) => (c.exitCode !== null ? null : new Promise((r) => c.once('exit', r)))));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    return await startParts();
  } catch (err) {
    await stopAll();
    throw err;
  }

  async function startParts() {
    const sandbox = run('sandbox', ['sandbox/dist/cli.js'], { SANDBOX_PORT: String(sandboxPort) });
    children.push(sandbox);
    const sandboxUrl = `http://127.0.0.1:${sandboxPort}`;
    await waitForHttp(`${sandboxUrl}/sandbox/api/state`, sandbox, 'sandbox');
    const links = linksToSandbox ? { LEADS_TELEGRAM_LINK_ROOT: `${sandboxUrl}/sandbox/t.me` } : {};
    const server = run('server', ['server/dist/main.js'], {
      PORT: String(serverPort),
      DATABASE_PATH: join(dir, 'leads.sqlite'),
      LEADS_SECRET: SECRET,
      LEADS_IP_SALT: 'e2e-salt',
      TELEGRAM_BOT_TOKEN: token,
      TELEGRAM_API_ROOT: sandboxUrl,
      LEADS_CHAT_ID: String(LEADS_CHAT),
      ADMIN_CHAT_ID: '-1001000000002',
      ...links,
      ...serverEnv,
    });
    children.unshift(server);
    const serverUrl = `http://127.0.0.1:${serverPort}`;
    await waitForHttp(`${serverUrl}/leads`, server, 'server');
    const landingBase = {
      LEADS_ENDPOINT: `${serverUrl}/leads`,
      LEADS_SECRET: SECRET,
      TELEGRAM_BOT_TOKEN: token,
      TELEGRAM_API_ROOT: sandboxUrl,
      LEADS_CHAT_ID: String(LEADS_CHAT),
      MIN_FILL_MS: String(minFillMs),
      ...links,
    };
    const { child: landing, url: landingUrl } = await startLanding(
      { ...landingBase, ...landingEnv },
      { onStart: (c) => children.unshift(c) },
    );

    return {
      sandboxUrl,
      serverUrl,
      landingUrl,
      dbPath: join(dir, 'leads.sqlite'),
      processes: { sandbox, server, landing },
      async state() {
        return (await fetch(`${sandboxUrl}/sandbox/api/state`)).json();
      },
      async cards() {
        const state = await this.state();
        return state.chats.find((c) => c.id === LEADS_CHAT).messages.filter((m) => m.text.startsWith('🆕 Заявка'));
      },
      /**
       * Another landing on this stack's server and sandbox, configured as the stack's own (its fill time included) with
       * `env` over it; `stop()` stops it too.
       */
      async landing(env = {}) {
        const started = await startLanding({ ...landingBase, ...env });
        children.unshift(started.child);
        return started;
      },
      stop: stopAll,
    };
  }
}

/** A landing's captcha settings against the sandbox's stand-in (sandbox/src/captcha.ts) playing `provider`. */
export function captchaStandInEnv(sandboxUrl, provider = 'turnstile') {
  return {
    CAPTCHA_PROVIDER: provider,
    CAPTCHA_SITE_KEY: '0x4AAAAAAAstandin',
    CAPTCHA_SECRET: 'stand-in-secret',
    CAPTCHA_SCRIPT_URL: `${sandboxUrl}/captcha/${provider}/api.js`,
    CAPTCHA_VERIFY_URL: `${sandboxUrl}/captcha/${provider}/verify`,
  };
}

/** A context of `browser` whose requests to anything but loopback are recorded (`outside`) and aborted. */
export async function isolatedContext(browser, options = {}) {
  const context = await browser.newContext(options);
  const outside = [];
  await context.route(
    (url) => url.hostname !== '127.0.0.1',
    (route) => {
      outside.push(route.request().url());
      return route.abort();
    },
  );
  return { context, outside };
}

export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
// CHROMIUM_PATH, else the usual system locations (scripts/lib/chromium.cjs; `npm test` checks it before the suites).
// Where there is none, the one line saying what to install is printed here and launching fails.
const chromium = createRequire(import.meta.url)('../scripts/lib/chromium.cjs').findChromium();
if (!chromium.path) console.error(`browser tests: ${chromium.why}`);
export const CHROMIUM = chromium.path ?? process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * A person takes longer than MIN_FILL_MS to fill the form: waits until `minFillMs` has passed since the start the form
 * carries (its signed startedAt token begins with that time), so the time spent typing counts towards it.
 */
export async function afterFillTime(page, minFillMs = MIN_FILL_MS) {
  const token = await page.locator('input[name="startedAt"]').first().inputValue();
  const left = Number(token.split('.')[0]) + minFillMs + 50 - Date.now();
  if (left > 0) await page.waitForTimeout(left);
}

export async function waitUntil(probe, timeoutMs = 10000, what = 'condition') {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
