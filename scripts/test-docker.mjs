#!/usr/bin/env node
// `npm run test:docker`: builds the image with the real Docker engine and checks both roles end to end: health,
// a lead through the landing's form into the server, the trace command on the volume, a non-root user, a clean stop.
// One PASS/FAIL line per check; exits non-zero on any failure. Not part of `npm test` (it needs a Docker engine).
//
// The landing shares the server's network namespace (`--network container:…`, as in a pod or on one host network),
// both on their default ports: the case where a healthcheck probing the wrong port would report a dead landing
// healthy. Only the landing's port is published, on 127.0.0.1; the server has no Telegram token (leads are stored,
// publishing waits), so nothing leaves this machine.
//
//   node scripts/test-docker.mjs              build, then test
//   node scripts/test-docker.mjs --no-build   test the image already tagged (STICKERS_IMAGE, default stickers-leads)
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const IMAGE = process.env.STICKERS_IMAGE || 'stickers-leads';
const build = !process.argv.includes('--no-build');
const id = `${process.pid}-${randomBytes(3).toString('hex')}`;
const NET = `stickers-test-net-${id}`;
const VOL = `stickers-test-data-${id}`;
const SERVER = `stickers-test-server-${id}`;
const LANDING = `stickers-test-landing-${id}`;
const INIT = `stickers-test-init-${id}`;
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
function stopCleanly(name) {
  const t0 = performance.now();
  must(['stop', '-t', String(STOP_GRACE_SEC), name], { timeoutMs: (STOP_GRACE_SEC + 20) * 1000 });
  const seconds = (performance.now() - t0) / 1000;
  const code = must(['inspect', '--format', '{{.State.ExitCode}}', name]);
  timings.push(`stop ${name.split('-')[2]} ${seconds.toFixed(1)} s`);
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
  docker(['rm', '-f', '-v', LANDING, SERVER]);
  docker(['volume', 'rm', '-f', VOL]);
  docker(['network', 'rm', NET]);
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

  must(['network', 'create', NET]);
  must(['volume', 'create', VOL]);
  const common = ['--health-interval', '1s', '--health-start-period', '60s'];
  must([
    'run',
    '-d',
    '--name',
    SERVER,
    '--network',
    NET,
    '-p',
    '127.0.0.1::3001',
    '-v',
    `${VOL}:/data`,
    '-e',
    `LEADS_SECRET=${SECRET}`,
    '-e',
    `LEADS_IP_SALT=${SALT}`,
    ...common,
    IMAGE,
  ]);
  const serverUp = await check('server container healthy (image HEALTHCHECK)', () =>
    timed('server healthy', () => waitForHealth(SERVER, 'healthy')),
  );
  if (!serverUp) return finish();

  // MIN_FILL_MS=0: this script posts the form at once; the bot filter is the landing's own tests' business.
  must([
    'run',
    '-d',
    '--name',
    LANDING,
    '--network',
    `container:${SERVER}`,
    '-e',
    'LEADS_ENDPOINT=http://127.0.0.1:3000/leads',
    '-e',
    `LEADS_SECRET=${SECRET}`,
    '-e',
    'MIN_FILL_MS=0',
    ...common,
    IMAGE,
    'landing',
  ]);
  const landingUp = await check("landing container healthy (sharing the server's network)", () =>
    timed('landing healthy', () => waitForHealth(LANDING, 'healthy')),
  );

  const [hostPort] = must(['port', SERVER, '3001/tcp']).split('\n')[0].split(':').slice(-1);
  const landingUrl = `http://127.0.0.1:${hostPort}`;
  let requestId;
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
    await check('the server stored it: `trace` on the volume finds the request', () => {
      const r = docker(['run', '--rm', '--network', 'none', '-v', `${VOL}:/data`, IMAGE, 'trace', requestId]);
      assert(r.code === 0 && /lead #\d+/.test(r.out) && r.out.includes(requestId), `trace → ${r.code}\n${r.out}\n${r.err}`);
      return r.out.split('\n')[0];
    });
  }

  await check('processes in both containers are not root', () => {
    const uids = [SERVER, LANDING].map((c) => must(['exec', c, 'id', '-u']));
    const owner = must(['exec', SERVER, 'stat', '-c', '%u', '/data/leads.sqlite']);
    assert(uids.every((u) => u !== '0') && owner !== '0', `uids ${uids.join(', ')}, database owned by ${owner}`);
    return `uids ${uids.join(', ')}; /data/leads.sqlite owned by uid ${owner}`;
  });

  if (landingUp) {
    // The landing hangs (SIGSTOP) while the server it shares a network with stays up: its healthcheck must fail.
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
    await check('landing stops cleanly on docker stop', () => stopCleanly(LANDING));
  }
  await check('server stops cleanly on docker stop', () => stopCleanly(SERVER));
  if (requestId) {
    await check('the lead is still on the volume after the stop', () => {
      const r = docker(['run', '--rm', '--network', 'none', '-v', `${VOL}:/data`, IMAGE, 'trace', requestId]);
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
