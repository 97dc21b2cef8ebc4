#!/usr/bin/env node
// `npm run test:docker`: builds the image with the real Docker engine, checks the image itself, then brings the
// one-box compose (compose.yaml: server + landing from the one image, the SQLite volume, health checks, .env) up with a
// Telegram sandbox beside it, and sends a lead through the landing's form into a card in the sandbox's group: the card,
// a press on it, `leads doctor` and `leads trace` inside the server's container, non-root processes, a hung landing
// reported unhealthy, a clean stop, the lead still on the volume. compose.postgres.yaml is validated with
// `docker-compose config` (its postgres and caddy images come from Docker Hub). One PASS/FAIL line per check; exits
// non-zero on any failure. Not part of `npm test` (it needs a Docker engine and docker-compose).
//
// The sandbox runs in a container of the project's image with the host's built sandbox/dist mounted (the image has no
// sandbox); the test's compose override and env file live in a temp folder, so the repository's .env is never read.
// Only 127.0.0.1 ports are published; nothing leaves this machine.
//
//   node scripts/test-docker.mjs              build, then test
//   node scripts/test-docker.mjs --no-build   test the image already tagged (STICKERS_IMAGE, default stickers-leads)
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const IMAGE = process.env.STICKERS_IMAGE || 'stickers-leads';
const build = !process.argv.includes('--no-build');
const id = `${process.pid}-${randomBytes(3).toString('hex')}`;
const PROJECT = `stickerstest${id.replace(/[^a-z0-9]/g, '')}`;
const INIT = `stickers-test-init-${id}`;
const SANDBOX_TOKEN = '123456789:sandbox-token';
const LEADS_CHAT = -1001000000001;
const work = mkdtempSync(join(tmpdir(), 'stickers-compose-'));
const SECRET = `docker-test-${randomBytes(12).toString('hex')}`;
const SALT = randomBytes(12).toString('hex');
// A stopped container must have exited by itself well before docker's own SIGKILL (10 s) would end it.
const STOP_GRACE_SEC = 10;

let passed = 0;
let failed = 0;
const timings = [];

function docker(args, { timeoutMs = 120_000 } = {}) {
  const r = spawnSync('docker', args, { encoding: 'utf8', timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 });
  return { code: r.status ?? -1, out: (r.stdout ?? '').trim(), err: (r.stderr ?? '').trim() || (r.error?.message ?? '') };
}

/** docker-compose on compose.yaml plus the test's override, in this run's own project (containers, volumes). */
let composeEnv = {};
function compose(args, { timeoutMs = 180_000, files = ['compose.yaml', join(work, 'compose.sandbox.yaml')], env = {} } = {}) {
  const r = spawnSync('docker-compose', ['-p', PROJECT, ...files.flatMap((f) => ['-f', f]), ...args], {
    cwd: root,
    env: { ...process.env, ...composeEnv, ...env },
    encoding: 'utf8',
    timeout: timeoutMs,
    maxBuffer: 64 * 1024 * 1024,
  });
  return { code: r.status ?? -1, out: (r.stdout ?? '').trim(), err: (r.stderr ?? '').trim() || (r.error?.message ?? '') };
}

function mustCompose(args, opts) {
  const r = compose(args, opts);
  if (r.code !== 0) throw new Error(`docker-compose ${args.join(' ')} → ${r.code}: ${r.err || r.out}`);
  return r.out;
}

/** The container of a compose service in this run. */
const containerOf = (service) => mustCompose(['ps', '-q', service]).split('\n')[0];

function freePort() {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

async function waitUntil(probe, timeoutMs, what) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => null);
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(250);
  }
}

function must(args, opts) {
  const r = docker(args, opts);
  if (r.code !== 0) throw new Error(`docker ${args.join(' ')} → ${r.code}: ${r.err || r.out}`);
  return r.out;
}

/** Runs one check: `fn` returns a short detail or throws; one PASS/FAIL line either way. */
async function check(name, fn) {
  try {
    const detail = await fn();
    passed++;
    console.log(`PASS ${name}${detail ? ` — ${detail}` : ''}`);
    return true;
  } catch (err) {
    failed++;
    console.log(`FAIL ${name} — ${err instanceof Error ? err.message : String(err)}`);
    return false;
  }
}

function assert(ok, message) {
  if (!ok) throw new Error(message);
}

async function timed(label, fn) {
  const t0 = performance.now();
  const result = await fn();
  timings.push(`${label} ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  return result;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Polls the container's health status (Docker running the image's HEALTHCHECK) until `want`, or fails. */
async function waitForHealth(name, want, timeoutMs = 90_000) {
  const deadline = Date.now() + timeoutMs;
  let status = '';
  while (Date.now() < deadline) {
    const r = docker(['inspect', '--format', '{{.State.Status}} {{if .State.Health}}{{.State.Health.Status}}{{end}}', name]);
    status = r.out;
    if (status === `running ${want}`) return;
    if (r.code !== 0 || !status.startsWith('running') || (want === 'healthy' && status === 'running unhealthy')) break;
    await sleep(250);
  }
  throw new Error(`${name} is "${status}", not "running ${want}"\n${docker(['logs', '--tail', '20', name]).err}`);
}

/** In the image, without starting a role: a shell test that must succeed. */
function inImage(script) {
  return docker(['run', '--rm', '--network', 'none', '--entrypoint', 'sh', IMAGE, '-c', script]);
}

/** `docker stop`, then the exit code and how long the stop took. */
function stopCleanly(name, label) {
  const t0 = performance.now();
  must(['stop', '-t', String(STOP_GRACE_SEC), name], { timeoutMs: (STOP_GRACE_SEC + 20) * 1000 });
  const seconds = (performance.now() - t0) / 1000;
  const code = must(['inspect', '--format', '{{.State.ExitCode}}', name]);
  timings.push(`stop ${label} ${seconds.toFixed(1)} s`);
  assert(code === '0', `exit code ${code} after ${seconds.toFixed(1)} s\n${docker(['logs', '--tail', '20', name]).err}`);
  assert(seconds < STOP_GRACE_SEC, `took ${seconds.toFixed(1)} s`);
  return `exit 0 in ${seconds.toFixed(1)} s`;
}

function formInputs(html) {
  const fields = {};
  for (const m of html.matchAll(/<input\b[^>]*>/g)) {
    const name = /\bname="([^"]*)"/.exec(m[0])?.[1];
    if (name) fields[name] = /\bvalue="([^"]*)"/.exec(m[0])?.[1] ?? '';
  }
  const action = /<form\b[^>]*\baction="([^"]*)"/.exec(html)?.[1] ?? '/?index';
  return { fields, action: action.replace(/&amp;/g, '&') };
}

function cleanup() {
  docker(['rm', '-f', '-v', INIT]);
  if (existsSync(join(work, 'compose.sandbox.yaml'))) compose(['down', '-v', '--remove-orphans', '-t', '5'], { timeoutMs: 120_000 });
  rmSync(work, { recursive: true, force: true });
}

async function main() {
  const info = docker(['info', '--format', '{{.ServerVersion}}'], { timeoutMs: 20_000 });
  if (info.code !== 0) {
    console.log('FAIL docker engine reachable — `docker info` failed: start a Docker engine (dockerd) on this machine first.');
    console.log(`     ${info.err.split('\n')[0]}`);
    console.log('0 passed, 1 failed');
    return 1;
  }
  console.log(`docker engine ${info.out}, image ${IMAGE}`);

  await check('Dockerfile names no BuildKit frontend (no "# syntax=" line)', () => {
    assert(!/^#\s*syntax\s*=/m.test(readFileSync(join(root, 'Dockerfile'), 'utf8')), 'the Dockerfile has a # syntax= line');
  });

  if (build) {
    const log = join(tmpdir(), `stickers-docker-build-${id}.log`);
    const ok = await check('image builds (DOCKER_BUILDKIT=0 docker build --network host)', () =>
      timed('build', () => {
        const r = spawnSync('docker', ['build', '--network', 'host', '--force-rm', '-t', IMAGE, '.'], {
          cwd: root,
          env: { ...process.env, DOCKER_BUILDKIT: '0' },
          encoding: 'utf8',
          maxBuffer: 256 * 1024 * 1024,
        });
        writeFileSync(log, `${r.stdout ?? ''}${r.stderr ?? ''}`);
        assert(r.status === 0, `exit ${r.status}; log: ${log}\n${`${r.stdout}${r.stderr}`.trim().split('\n').slice(-25).join('\n')}`);
        return `log: ${log}`;
      }),
    );
    if (!ok) return finish();
    // The build stage is kept in the builder's cache; node-gyp records there where the Node headers came from.
    await check("better-sqlite3 compiled against the image's own Node headers (no header download)", () => {
      const deps = `${IMAGE}-deps-${id}`;
      const r = spawnSync('docker', ['build', '--network', 'host', '--target', 'deps', '-q', '-t', deps, '.'], {
        cwd: root,
        env: { ...process.env, DOCKER_BUILDKIT: '0' },
        encoding: 'utf8',
      });
      assert(r.status === 0, `docker build --target deps → ${r.status}: ${r.stderr}`);
      try {
        const gypi = docker([
          'run',
          '--rm',
          '--network',
          'none',
          '--entrypoint',
          'cat',
          deps,
          'node_modules/better-sqlite3/build/config.gypi',
        ]);
        const nodedir = /"nodedir": "([^"]*)"/.exec(gypi.out)?.[1];
        assert(nodedir === '/usr/local', `nodedir ${nodedir ?? 'not found'} ${gypi.err}`);
        return `nodedir ${nodedir}`;
      } finally {
        docker(['rmi', deps]);
      }
    });
  } else if (docker(['image', 'inspect', IMAGE]).code !== 0) {
    await check(`image ${IMAGE} exists`, () => assert(false, 'not built: run without --no-build'));
    return finish();
  }
  const size = Number(must(['image', 'inspect', '--format', '{{.Size}}', IMAGE]));
  console.log(`image size ${(size / 1e6).toFixed(0)} MB`);

  await check('image runs as a non-root user', () => {
    const user = must(['image', 'inspect', '--format', '{{.Config.User}}', IMAGE]);
    const uid = inImage('id -u');
    assert(uid.code === 0 && uid.out !== '0', `uid ${uid.out} (USER "${user}")`);
    return `USER ${user}, uid ${uid.out}`;
  });
  await check('runtime image has no TypeScript', () => {
    const r = inImage('find /app -path "*/node_modules/typescript" -o -path "*/node_modules/.bin/tsc"');
    assert(r.code === 0 && r.out === '', r.out || r.err);
  });
  await check('runtime image has no @stickers/telegram-sandbox link and no dangling link', () => {
    const link = 'node_modules/@stickers/telegram-sandbox';
    const r = inImage(`test ! -e ${link} && test ! -L ${link} && find -L /app -type l`);
    assert(r.code === 0 && r.out === '', r.out || r.err || 'the sandbox link is there');
  });
  await check('runtime better-sqlite3 is the addon alone (no build/Release/obj*, deps, src)', () => {
    const r = inImage(
      'cd node_modules/better-sqlite3 && test -f build/Release/better_sqlite3.node && ' +
        'test -z "$(ls -d build/Release/obj* build/deps deps src 2>/dev/null)" && ' +
        "node -e \"new (require('better-sqlite3'))(':memory:').prepare('select 1').get()\"",
    );
    assert(r.code === 0, r.out || r.err || 'leftovers found');
  });

  // Under `--init` the role's process is not PID 1: the healthcheck must still find it (no volume: an anonymous one).
  await check('healthy under docker run --init as well', async () => {
    must([
      'run',
      '-d',
      '--init',
      '--name',
      INIT,
      '--network',
      'none',
      '--health-interval',
      '1s',
      '-e',
      `LEADS_SECRET=${SECRET}`,
      '-e',
      `LEADS_IP_SALT=${SALT}`,
      IMAGE,
    ]);
    try {
      await waitForHealth(INIT, 'healthy');
    } finally {
      docker(['rm', '-f', '-v', INIT]);
    }
  });

  const composer = spawnSync('docker-compose', ['version', '--short'], { encoding: 'utf8' });
  if (composer.status !== 0) {
    await check('docker-compose present', () => assert(false, 'docker-compose not found: apt-get install -y docker-compose'));
    return finish();
  }
  console.log(`docker-compose ${composer.stdout.trim()}`);

  const secret = `compose-test-${randomBytes(12).toString('hex')}`;
  const ports = { server: await freePort(), landing: await freePort(), sandbox: await freePort() };
  // The test's own .env: what an operator writes after `leads setup`, with the sandbox as Telegram.
  const envFile = join(work, 'test.env');
  writeFileSync(
    envFile,
    [
      `TELEGRAM_BOT_TOKEN=${SANDBOX_TOKEN}`,
      'TELEGRAM_API_ROOT=http://telegram:3002',
      `LEADS_CHAT_ID=${LEADS_CHAT}`,
      'ADMIN_CHAT_ID=-1001000000002',
      `LEADS_SECRET=${secret}`,
      `LEADS_IP_SALT=${SALT}`,
      // This script posts the form at once; the bot filter is the landing's own tests' business.
      'MIN_FILL_MS=0',
      '',
    ].join('\n'),
  );
  const sandboxDist = join(root, 'sandbox', 'dist');
  writeFileSync(
    join(work, 'compose.sandbox.yaml'),
    [
      'services:',
      '  telegram:',
      `    image: ${IMAGE}`,
      "    entrypoint: ['node', '/sandbox/cli.js']",
      '    environment:',
      '      SANDBOX_HOST: 0.0.0.0',
      "      SANDBOX_PORT: '3002'",
      `      TELEGRAM_BOT_TOKEN: '${SANDBOX_TOKEN}'`,
      '    volumes:',
      `      - ${sandboxDist}:/sandbox:ro`,
      '    ports:',
      `      - 127.0.0.1:${ports.sandbox}:3002`,
      '    healthcheck:',
      '      disable: true',
      '  server:',
      '    depends_on:',
      '      telegram:',
      '        condition: service_started',
      '',
    ].join('\n'),
  );
  composeEnv = {
    LEADS_ENV_FILE: envFile,
    STICKERS_IMAGE: IMAGE,
    SERVER_PORT: String(ports.server),
    LANDING_PORT: `127.0.0.1:${ports.landing}`,
  };

  await check('compose.postgres.yaml is valid (docker-compose config)', () => {
    // What its header asks .env to add (compose reads them from .env, or from the environment as here).
    const pg = {
      files: ['compose.postgres.yaml'],
      timeoutMs: 60_000,
      env: { POSTGRES_PASSWORD: 'composecheck1', LEADS_PUBLIC_ADDRESS: 'leads.example.com' },
    };
    const r = compose(['config', '-q'], pg);
    assert(r.code === 0, r.err || r.out);
    const services = compose(['config', '--services'], pg).out.split('\n');
    assert(
      ['postgres', 'server-1', 'server-2', 'landing', 'proxy'].every((s) => services.includes(s)),
      `services: ${services.join(', ')}`,
    );
    return `services ${services.join(', ')}`;
  });

  const sandboxBuilt = await check('the sandbox is built (sandbox/dist, mounted into its container)', () =>
    assert(existsSync(join(sandboxDist, 'cli.js')), 'no sandbox/dist/cli.js: run npm run build first'),
  );
  if (!sandboxBuilt) return finish();
  const up = await check('docker-compose up: server, landing and the sandbox start', () =>
    timed('compose up', () => mustCompose(['up', '-d', '--no-build'], { timeoutMs: 240_000 })),
  );
  if (!up) return finish();
  const SERVER = containerOf('server');
  const LANDING = containerOf('landing');
  const serverUp = await check('server healthy (its compose health check)', () =>
    timed('server healthy', () => waitForHealth(SERVER, 'healthy')),
  );
  const landingUp = await check('landing healthy, started after the server was', () =>
    timed('landing healthy', () => waitForHealth(LANDING, 'healthy')),
  );
  if (!serverUp) return finish();

  const sandboxUrl = `http://127.0.0.1:${ports.sandbox}`;
  const landingUrl = `http://127.0.0.1:${ports.landing}`;
  const state = async () => (await fetch(`${sandboxUrl}/sandbox/api/state`)).json();
  const groupMessages = async () => (await state()).chats.find((c) => c.id === LEADS_CHAT).messages;
  let requestId;
  let card;
  if (landingUp) {
    await check('a lead through the landing form: the page says sent', async () => {
      const page = await fetch(`${landingUrl}/`);
      assert(page.status === 200, `GET / → ${page.status}`);
      const { fields, action } = formInputs(await page.text());
      assert(fields.requestId && fields.startedAt, `no requestId/startedAt in the form (${Object.keys(fields).join(', ')})`);
      requestId = fields.requestId;
      const body = new URLSearchParams({
        ...fields,
        name: 'Докер Проверкин',
        telegram: '@docker_check',
        phone: '+79990001122',
        comment: 'из npm run test:docker',
      });
      const res = await fetch(new URL(action, landingUrl), { method: 'POST', body, redirect: 'manual' });
      const html = await res.text();
      assert(res.status === 200 && html.includes('data-state="sent"'), `POST ${action} → ${res.status}, no "sent" state`);
      return `request_id ${requestId}`;
    });
  }
  if (requestId) {
    await check("the lead's card in the sandbox's group (the server published it through TELEGRAM_API_ROOT)", async () => {
      card = await timed('card', () =>
        waitUntil(
          async () => (await groupMessages()).find((m) => m.text.startsWith('🆕 Заявка') && m.text.includes('Докер Проверкин')),
          30_000,
          'the card',
        ),
      );
      return card.text.split('\n')[0];
    });
  }
  if (card) {
    await check('a press on the card reaches the server (polling) and the card changes', async () => {
      const button = card.reply_markup.inline_keyboard.flat().find((b) => b.callback_data?.endsWith(':in_progress'));
      assert(button, `no "in progress" button: ${JSON.stringify(card.reply_markup)}`);
      const res = await fetch(`${sandboxUrl}/sandbox/api/press`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ chat_id: LEADS_CHAT, message_id: card.message_id, data: button.callback_data }),
      });
      assert(res.ok, `press → ${res.status} ${await res.text()}`);
      const edited = await waitUntil(
        async () => (await groupMessages()).find((m) => m.message_id === card.message_id && m.edit_date),
        30_000,
        'the card rewritten after the press',
      );
      return edited.text.split('\n').find((l) => /В работе/.test(l)) ?? 'rewritten';
    });
  }
  await check('`leads doctor` in the server container: every check ok', () => {
    const r = compose(['exec', '-T', 'server', 'leads', 'doctor'], { timeoutMs: 60_000 });
    console.log(r.out.replace(/^/gm, '     '));
    assert(r.code === 0, `exit ${r.code}\n${r.err}`);
    return r.out.split('\n').at(-1);
  });
  if (requestId) {
    await check('`leads trace` in the server container: the request, stored and published', () => {
      const r = compose(['exec', '-T', 'server', 'leads', 'trace', requestId], { timeoutMs: 60_000 });
      assert(
        r.code === 0 && /lead #\d+/.test(r.out) && r.out.includes(requestId) && /card\s+published/.test(r.out),
        `trace → ${r.code}\n${r.out}\n${r.err}`,
      );
      return r.out.split('\n')[0];
    });
  }

  await check('processes in both containers are not root; the database belongs to them', () => {
    const uids = [SERVER, LANDING].map((c) => must(['exec', c, 'id', '-u']));
    const owner = must(['exec', SERVER, 'stat', '-c', '%u', '/data/leads.sqlite']);
    assert(uids.every((u) => u !== '0') && owner !== '0', `uids ${uids.join(', ')}, database owned by ${owner}`);
    return `uids ${uids.join(', ')}; /data/leads.sqlite owned by uid ${owner}`;
  });

  if (landingUp) {
    // The landing hangs (SIGSTOP) while the server stays up: its own health check must fail.
    await check('a hung landing beside a healthy server is reported unhealthy', () => {
      must(['kill', '--signal', 'STOP', LANDING]);
      try {
        const r = docker(['exec', LANDING, 'node', 'scripts/healthcheck.mjs'], { timeoutMs: 30_000 });
        assert(r.code === 1, `healthcheck exit ${r.code}: ${r.out}`);
        return r.out;
      } finally {
        must(['kill', '--signal', 'CONT', LANDING]);
      }
    });
    await check('landing stops cleanly on docker stop', () => stopCleanly(LANDING, 'landing'));
  }
  await check('server stops cleanly on docker stop', () => stopCleanly(SERVER, 'server'));
  if (requestId) {
    await check('the lead is still on the volume after the stop (`docker-compose run … trace`)', () => {
      const r = compose(['run', '--rm', '--no-deps', '-T', 'server', 'trace', requestId], { timeoutMs: 120_000 });
      assert(r.code === 0 && /lead #\d+/.test(r.out) && r.out.includes(requestId), `trace → ${r.code}\n${r.out}\n${r.err}`);
    });
  }
  return finish();
}

function finish() {
  if (timings.length) console.log(`timings: ${timings.join(', ')}`);
  console.log(`${passed} passed, ${failed} failed`);
  return failed === 0 ? 0 : 1;
}

let code = 1;
try {
  code = await main();
} catch (err) {
  console.log(`FAIL test-docker aborted — ${err instanceof Error ? err.message : String(err)}`);
  console.log(`${passed} passed, ${failed + 1} failed`);
} finally {
  cleanup();
}
process.exit(code);
