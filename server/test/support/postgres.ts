// A throwaway PostgreSQL server for tests (issue 13), started by the tests themselves from Debian's `postgresql`
// binaries (.ci/run installs the package; nothing else is needed, no cluster of Debian's is used): a fresh data
// directory in a temp dir, a free loopback port, its unix socket in the same temp dir, trust authentication, no fsync.
// `stop()` shuts it down and removes the directory. A server whose test never stopped it does not outlive the process:
// the process's exit hook stops it, and a watchdog stops it when the process is killed (the exit hook cannot run then).
import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import { chownSync, closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { runInThisContext } from 'node:vm';
import { Client } from 'pg';

export interface TestPostgres {
  /** `postgres://postgres@127.0.0.1:<port>/postgres`: the superuser, trust authentication. */
  url: string;
  /** Creates an empty database on this server and gives its URL. */
  createDatabase(name: string): Promise<string>;
  /** `pg_ctl stop -m fast`, then the temp dir is removed. Safe to call twice. */
  stop(): Promise<void>;
}

const PG_ROOT = '/usr/lib/postgresql';
const READY_DEADLINE_MS = 30_000;

/** The newest installed server's bin directory, e.g. /usr/lib/postgresql/15/bin. */
export function postgresBinDir(): string {
  const versions = existsSync(PG_ROOT) ? readdirSync(PG_ROOT).filter((v) => existsSync(join(PG_ROOT, v, 'bin', 'initdb'))) : [];
  if (versions.length === 0) {
    throw new Error(
      `PostgreSQL server binaries not found (${PG_ROOT}/<version>/bin/initdb): the PostgreSQL tests start their own server ` +
        `from them. Install Debian's postgresql package (apt-get install postgresql); .ci/run does.`,
    );
  }
  versions.sort((a, b) => b.localeCompare(a, 'en', { numeric: true }));
  return join(PG_ROOT, versions[0], 'bin');
}

/** initdb and pg_ctl refuse to run as root: as root they run as the `postgres` user (Debian's package creates it). */
function runAs(): { uid: number; gid: number } | null {
  if (process.getuid?.() !== 0) return null;
  try {
    const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
    return { uid: id('-u'), gid: id('-g') };
  } catch {
    throw new Error(
      `running as root and there is no "postgres" user to run PostgreSQL as: install Debian's postgresql package; .ci/run does.`,
    );
  }
}

function command(owner: { uid: number } | null, file: string, args: string[]): [string, string[]] {
  return owner ? ['runuser', ['-u', 'postgres', '--', file, ...args]] : [file, args];
}

/** Runs a command to its end; rejects with its output when it fails. */
function run(file: string, args: string[], cwd: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`${file} ${args.join(' ')} exited with ${code}:\n${output}`))));
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

function tail(path: string): string {
  try {
    return readFileSync(path, 'utf8').split('\n').slice(-20).join('\n');
  } catch {
    return '(no log)';
  }
}

interface Running {
  dir: string;
  data: string;
  pgCtl: string;
  owner: { uid: number } | null;
}

/** Servers not stopped yet, kept on the real process: one exit hook for every test file of a jest worker. */
const REGISTRY = Symbol.for('stickers-leads.test-postgres');

function stopNow(server: Running): void {
  if (existsSync(join(server.data, 'postmaster.pid'))) {
    const [file, args] = command(server.owner, server.pgCtl, ['stop', '-D', server.data, '-m', 'immediate', '-w']);
    spawnSync(file, args, { cwd: server.dir, stdio: 'ignore' });
  }
  rmSync(server.dir, { recursive: true, force: true });
}

function running(): Set<Running> {
  // Jest gives each test file a copy of `process` whose 'exit' event never fires; the worker's real process does.
  const realProcess = runInThisContext('process') as NodeJS.Process & { [REGISTRY]?: Set<Running> };
  let servers = realProcess[REGISTRY];
  if (!servers) {
    const registry = new Set<Running>();
    realProcess[REGISTRY] = servers = registry;
    realProcess.on('exit', () => {
      for (const server of registry) stopNow(server);
      registry.clear();
    });
  }
  return servers;
}

/**
 * For a process that is killed (SIGKILL, a crashed jest worker), where no exit hook runs: a detached shell that waits
 * for this process to end, then stops the server and removes its directory. Killed by `stop()`.
 */
function startWatchdog(server: Running): ChildProcess {
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

/** Starts a fresh PostgreSQL server; see the top of this file. Throws a clear error when PostgreSQL is not installed. */
export async function startPostgres(options: { maxConnections?: number } = {}): Promise<TestPostgres> {
  const bin = postgresBinDir();
  const owner = runAs();
  const dir = mkdtempSync(join(tmpdir(), 'leads-pg-'));
  const data = join(dir, 'data');
  const socketDir = join(dir, 'socket');
  const log = join(dir, 'postgres.log');
  mkdirSync(socketDir);
  closeSync(openSync(log, 'a'));
  if (owner) for (const path of [dir, socketDir, log]) chownSync(path, owner.uid, owner.gid);
  const server: Running = { dir, data, pgCtl: join(bin, 'pg_ctl'), owner };
  const servers = running();
  servers.add(server);
  const watchdog = startWatchdog(server);

  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  const stop = async (): Promise<void> => {
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
        'fsync=off',
        '-c',
        'synchronous_commit=off',
        '-c',
        'full_page_writes=off',
        '-c',
        `max_connections=${options.maxConnections ?? 100}`,
      ]);
      const started = spawn(postgres, args, { cwd: dir, stdio: ['ignore', fd, fd] });
      closeSync(fd);
      // A server a test forgot to stop must not keep the process alive: the exit hook stops it when the process ends.
      started.unref();
      child = started;
      exited = new Promise((resolve) => started.once('exit', () => resolve()));
      const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
      if (await acceptsConnections(url, started)) {
        return {
          url,
          stop,
          async createDatabase(name: string): Promise<string> {
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
async function acceptsConnections(url: string, child: ChildProcess): Promise<boolean> {
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
