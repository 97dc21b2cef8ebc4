// The parts `npm run dev` starts, where each listens, and the checks around their start: before it, whether another
// `npm run dev` runs in this working copy (its record in data/) and whether a part's port is taken (then dev says so in
// one line and builds and starts nothing); after it, whether each part answers over HTTP (the ready banner waits for
// all three).
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';

/**
 * The parts in their start order. `variable`: the environment variable that sets the part's port; `host`: the address
 * the part binds, as the part itself reads it (null: every address); `health`: a path the part answers 200 on.
 * @param {NodeJS.ProcessEnv} env the environment the parts run with
 */
export function devParts(env) {
  return [
    {
      name: 'sandbox',
      what: 'the Telegram sandbox',
      variable: 'SANDBOX_PORT',
      port: Number(env.SANDBOX_PORT),
      host: env.SANDBOX_HOST ?? '127.0.0.1',
      health: '/sandbox/api/state',
    },
    { name: 'server', what: 'the leads server', variable: 'PORT', port: Number(env.PORT), host: env.HOST || null, health: '/health' },
    {
      name: 'landing',
      what: 'the landing',
      variable: 'LANDING_PORT',
      port: Number(env.LANDING_PORT),
      host: env.HOST ?? '0.0.0.0',
      health: '/health',
    },
  ];
}

/**
 * Whether the part's port is taken where the part would bind it: a listen there that fails with EADDRINUSE. Any other
 * failure (a host that is not this machine's, a privileged port) is the part's own to report when it starts.
 * @returns {Promise<boolean>}
 */
export function portTaken(part) {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', (err) => resolve(err.code === 'EADDRINUSE'));
    probe.once('listening', () => probe.close(() => resolve(false)));
    probe.listen({ port: part.port, host: part.host ?? undefined, exclusive: true });
  });
}

/** The one line for a taken port: the port, the part, and the variable that chooses another. */
export function portTakenLine(part) {
  const other = part.port + 10;
  return `npm run dev: port ${part.port} (${part.name}: ${part.what}) is already in use; choose another with ${part.variable}, e.g. ${part.variable}=${other} npm run dev`;
}

/** The address a part is probed at: its own host, or loopback when it binds every address. */
export function healthUrl(part) {
  const host = !part.host || part.host === '0.0.0.0' || part.host === '::' ? '127.0.0.1' : part.host;
  return `http://${host.includes(':') ? `[${host}]` : host}:${part.port}${part.health}`;
}

/**
 * Resolves once every part answers its health path with 2xx, probing each every `everyMs` until then; `stopped()`
 * true ends the wait (dev is stopping: a part exited, or Ctrl-C).
 * @returns {Promise<boolean>} true: all answered
 */
export async function allAnswer(parts, stopped, everyMs = 250) {
  const pending = new Set(parts);
  while (pending.size > 0) {
    if (stopped()) return false;
    for (const part of [...pending]) {
      const ok = await fetch(healthUrl(part), { signal: AbortSignal.timeout(2000) }).then(
        (res) => res.ok,
        () => false,
      );
      if (ok) pending.delete(part);
    }
    if (pending.size > 0) await new Promise((r) => setTimeout(r, everyMs));
  }
  return !stopped();
}

/** Whether `pid` is still an `npm run dev` (where /proc tells: a record's pid may have been given to another process since). */
const isAlive = (pid) => {
  try {
    process.kill(pid, 0);
  } catch (err) {
    if (err.code !== 'EPERM') return false;
  }
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('dev.mjs');
  } catch {
    // Gone meanwhile, or a system without /proc (then the signal's answer stands).
    return !existsSync('/proc/self/cmdline');
  }
};

/**
 * The other `npm run dev`s of this working copy still running (their records in `dir`); records of processes gone are
 * removed.
 * @returns {{ pid: number }[]}
 */
export function runningDevs(dir) {
  let names;
  try {
    names = readdirSync(dir).filter((name) => /^\.dev-\d+\.json$/.test(name));
  } catch {
    return [];
  }
  const running = [];
  for (const name of names) {
    let other;
    try {
      other = JSON.parse(readFileSync(join(dir, name), 'utf8'));
    } catch {
      continue;
    }
    if (other.pid === process.pid) continue;
    if (isAlive(other.pid)) running.push(other);
    else rmSync(join(dir, name), { force: true });
  }
  return running;
}

/** Records this `npm run dev` in `dir`; the returned function removes the record. */
export function recordDev(dir) {
  const path = join(dir, `.dev-${process.pid}.json`);
  writeFileSync(path, JSON.stringify({ pid: process.pid }));
  return () => rmSync(path, { force: true });
}

/** The one line for a second `npm run dev` in a working copy where one runs. */
export function runningDevLine(other) {
  return (
    `npm run dev is already running in this working copy (pid ${other.pid}): stop it first (Ctrl-C where it runs); ` +
    "a second one would rebuild the first's server/dist, shared/dist and sandbox/dist under it"
  );
}
