// A throwaway PostgreSQL for `npm run bench` that keeps the durable settings (fsync, synchronous_commit and
// full_page_writes on: a commit returns after its WAL is flushed, as in production). scripts/lib/throwaway-postgres.mjs
// (the drills' and scripts' server) starts PostgreSQL with fsync, synchronous_commit and full_page_writes off, and
// those are command-line settings that no ALTER SYSTEM / ALTER DATABASE can turn back on (fsync is not even
// settable per session), so the bench starts its own server the same way (Debian's binaries from
// `postgresBinDir()`, a fresh data directory in a temp dir, a free loopback port, trust authentication, run as the
// `postgres` user when we are root) but with the defaults left on. `stop()` shuts it down and removes the directory;
// an exit hook does the same for a server the caller never stopped.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { chownSync, closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { postgresBinDir } from '../scripts/lib/throwaway-postgres.mjs';
import { freePort } from '../e2e/stack.mjs';

export { postgresBinDir };

/** The settings that make a commit durable; the bench prints what the server reports for them. */
export const DURABLE_SETTINGS = ['fsync', 'synchronous_commit', 'full_page_writes', 'wal_sync_method'];

function owner() {
  if (process.getuid?.() !== 0) return null;
  const id = (flag) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
  return { uid: id('-u'), gid: id('-g') };
}
const as = (who, file, args) => (who ? ['runuser', ['-u', 'postgres', '--', file, ...args]] : [file, args]);

function runToEnd(file, args, cwd) {
  const r = spawnSync(file, args, { cwd, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${file} ${args.join(' ')} exited with ${r.status}:\n${r.stdout}${r.stderr}`);
}

/**
 * Starts a durable PostgreSQL server. Throws when the binaries are missing (postgresBinDir's message). `settings`: more
 * `-c name=value` settings (e.g. `shared_preload_libraries` for a diagnosis with pg_stat_statements).
 * @returns {Promise<{ url: string, version: string, pid: number, settings: Record<string, string>, createDatabase(name: string): Promise<string>, stop(): Promise<void> }>}
 */
export async function startDurablePostgres({ maxConnections = 100, settings: extra = {} } = {}) {
  const bin = postgresBinDir();
  const who = owner();
  const dir = mkdtempSync(join(tmpdir(), 'leads-bench-pg-'));
  const data = join(dir, 'data');
  const socketDir = join(dir, 'socket');
  const log = join(dir, 'postgres.log');
  mkdirSync(socketDir);
  closeSync(openSync(log, 'a'));
  if (who) for (const path of [dir, socketDir, log]) chownSync(path, who.uid, who.gid);

  let stopped = false;
  const stopNow = () => {
    if (stopped) return;
    stopped = true;
    if (existsSync(join(data, 'postmaster.pid'))) {
      const [file, args] = as(who, join(bin, 'pg_ctl'), ['stop', '-D', data, '-m', 'fast', '-w']);
      spawnSync(file, args, { cwd: dir, stdio: 'ignore' });
    }
    rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', stopNow);

  try {
    const [initdb, initArgs] = as(who, join(bin, 'initdb'), [
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
    runToEnd(initdb, initArgs, dir);
    const port = await freePort();
    const [postgres, args] = as(who, join(bin, 'postgres'), [
      '-D',
      data,
      '-p',
      String(port),
      '-k',
      socketDir,
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'fsync=on',
      '-c',
      'synchronous_commit=on',
      '-c',
      'full_page_writes=on',
      '-c',
      `max_connections=${maxConnections}`,
      ...Object.entries(extra).flatMap(([k, v]) => ['-c', `${k}=${v}`]),
    ]);
    const fd = openSync(log, 'a');
    const child = spawn(postgres, args, { cwd: dir, stdio: ['ignore', fd, fd] });
    closeSync(fd);
    child.unref();
    const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
    const deadline = Date.now() + 30_000;
    let client;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`PostgreSQL exited at start:\n${readFileSync(log, 'utf8').slice(-2000)}`);
      client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1000 });
      client.on('error', () => undefined);
      try {
        await client.connect();
        break;
      } catch (err) {
        await client.end().catch(() => undefined);
        if (Date.now() > deadline) throw new Error(`PostgreSQL did not accept connections in 30 s: ${String(err)}`, { cause: err });
        await sleep(100);
      }
    }
    const settings = {};
    let version;
    try {
      for (const name of DURABLE_SETTINGS) settings[name] = (await client.query(`show ${name}`)).rows[0][name];
      version = (await client.query('show server_version')).rows[0].server_version;
    } finally {
      await client.end();
    }
    return {
      url,
      version,
      /** The postmaster's pid (its backends are its children). */
      pid: Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]),
      settings,
      async createDatabase(name) {
        const c = new pg.Client({ connectionString: url });
        await c.connect();
        try {
          await c.query(`create database "${name.replace(/"/g, '""')}"`);
        } finally {
          await c.end();
        }
        return `postgres://postgres@127.0.0.1:${port}/${encodeURIComponent(name)}`;
      },
      stop: () => {
        process.removeListener('exit', stopNow);
        stopNow();
        return Promise.resolve();
      },
    };
  } catch (err) {
    stopNow();
    throw err;
  }
}
