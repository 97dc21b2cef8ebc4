// A throwaway PostgreSQL server, started from Debian's `postgresql` binaries (no cluster of Debian's is used): a fresh
// data directory in a temp dir, a free loopback port, its unix socket in the same temp dir, trust authentication. The
// one implementation for the server's tests (server/test/support/postgres.ts wraps it with types), the e2e tests,
// the drills and the bench. Tests and drills run it without fsync (fast; nothing to keep); the bench asks for the
// durable settings (`durable: true`), which are command-line settings no ALTER SYSTEM can turn back on later.
// `stop()` shuts it down and removes the directory. A server the caller never stopped does not outlive the process:
// the process's exit hook stops it, and a detached watchdog stops it when the process is killed (no exit hook runs then).
// CommonJS so that both the jest tests (CommonJS) and the ES modules of e2e/, drills/ and bench/ can load it.
'use strict';
const { execFileSync, spawn, spawnSync } = require('node:child_process');
const { chownSync, closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync } = require('node:fs');
const { createServer } = require('node:net');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const { setTimeout: sleep } = require('node:timers/promises');
const { Client } = require('pg');
const PG_ROOT = '/usr/lib/postgresql';
const READY_DEADLINE_MS = 30_000;

/** The newest installed server's bin directory, e.g. /usr/lib/postgresql/15/bin. */
function postgresBinDir() {
  const versions = existsSync(PG_ROOT) ? readdirSync(PG_ROOT).filter((v) => existsSync(join(PG_ROOT, v, 'bin', 'initdb'))) : [];
  if (versions.length === 0) {
    throw new Error(
      `PostgreSQL server binaries not found (${PG_ROOT}/<version>/bin/initdb): the PostgreSQL tests, drills and bench start ` +
        `their own server from them. Install Debian's postgresql package (apt-get install postgresql); .ci/run does.`,
    );
  }
  versions.sort((a, b) => b.localeCompare(a, 'en', { numeric: true }));
  return join(PG_ROOT, versions[0], 'bin');
}

/** initdb and pg_ctl refuse to run as root: as root they run as the `postgres` user (Debian's package creates it). */
function runAs() {
  if (process.getuid?.() !== 0) return null;
  try {
    const id = (flag) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
    return { uid: id('-u'), gid: id('-g') };
  } catch {
    throw new Error(`running as root and there is no "postgres" user to run PostgreSQL as: install Debian's postgresql package.`);
  }
}

function command(owner, file, args) {
  return owner ? ['runuser', ['-u', 'postgres', '--', file, ...args]] : [file, args];
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
 *   `createDatabase` creates an empty database and gives its URL; `stop` is `pg_ctl stop -m fast`, then the temp dir
 *   is removed (safe to call twice).
 */
async function startPostgres(options = {}) {
  const bin = postgresBinDir();
  const owner = runAs();
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
        const [file, args] = command(owner, server.pgCtl, ['stop', '-D', data, '-m', 'fast', '-w']);
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

module.exports = { startPostgres, postgresBinDir };
