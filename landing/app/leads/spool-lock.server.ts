/**
 * One replaying landing per spool directory: `<dir>/.lock`, created with O_EXCL, holds the owner's pid (as JSON with
 * its host and a random token). A second landing on the same directory refuses to start while the owner lives.
 * A stale lock is taken over: its pid is dead (same host), it is this very pid (a container restarted: the landing
 * is pid 1 again), or its owner has not touched it for LOCK_STALE_MS (the owner refreshes it every
 * LOCK_HEARTBEAT_MS: this covers a reused pid and a directory shared between hosts).
 */
import { randomBytes } from 'node:crypto';
import { promises as fsp, readFileSync, rmSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { syncDir } from './spool.server';

export const LOCK_FILE = '.lock';
export const LOCK_HEARTBEAT_MS = 10_000;
export const LOCK_STALE_MS = 60_000;

interface LockContent {
  pid: number;
  host: string;
  token: string;
  started_at: string;
}

export interface LockHolder {
  pid: number;
  host: string;
  /** Since the holder last touched the lock. */
  idleMs: number;
}

export interface SpoolLock {
  readonly path: string;
  /** True while the lock file is still this one (another process may have taken a stale-looking lock over). */
  owned(): Promise<boolean>;
  /** Refreshes the lock's time; false when it is not ours any more. */
  heartbeat(): Promise<boolean>;
  release(): Promise<void>;
  /** The same, synchronously: for the process's `exit` event, whoever ends the process. */
  releaseSync(): void;
}

export type LockResult = { ok: true; lock: SpoolLock; tookOver: LockHolder | null } | { ok: false; holder: LockHolder };

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists, it is someone else's.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function readLock(path: string, now: number): Promise<LockHolder | null> {
  try {
    const [text, stat] = await Promise.all([fsp.readFile(path, 'utf8'), fsp.stat(path)]);
    const content = JSON.parse(text) as Partial<LockContent>;
    return { pid: Number(content.pid), host: String(content.host ?? ''), idleMs: now - stat.mtimeMs };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    // Unreadable or half-written (a crash while creating it): nobody can be relying on it.
    return { pid: Number.NaN, host: '', idleMs: Number.POSITIVE_INFINITY };
  }
}

function stale(holder: LockHolder): boolean {
  if (!(holder.idleMs < LOCK_STALE_MS)) return true;
  if (!Number.isInteger(holder.pid) || holder.pid <= 0) return true;
  if (holder.host !== hostname()) return false;
  return holder.pid === process.pid || !alive(holder.pid);
}

/** Takes `<dir>/.lock`, or says who holds it. */
export async function acquireSpoolLock(dir: string, now = Date.now()): Promise<LockResult> {
  const path = join(dir, LOCK_FILE);
  const token = randomBytes(12).toString('hex');
  const content: LockContent = { pid: process.pid, host: hostname(), token, started_at: new Date(now).toISOString() };
  let tookOver: LockHolder | null = null;
  for (let attempt = 0; attempt < 3; attempt += 1) {
    try {
      const handle = await fsp.open(path, 'wx', 0o600);
      try {
        await handle.writeFile(`${JSON.stringify(content)}\n`);
        await handle.sync();
      } finally {
        await handle.close();
      }
      await syncDir(dir);
      return { ok: true, lock: ownedLock(path, token), tookOver };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const holder = await readLock(path, Date.now());
    if (!holder) continue;
    if (!stale(holder)) return { ok: false, holder };
    tookOver = holder;
    // Two landings taking over at once: the one whose lock was replaced sees it at its next `owned()` and stops.
    await fsp.rename(path, join(dir, `.lock.stale-${process.pid}`)).catch(() => undefined);
    await fsp.rm(join(dir, `.lock.stale-${process.pid}`), { force: true });
  }
  const holder = (await readLock(path, Date.now())) ?? { pid: Number.NaN, host: '', idleMs: 0 };
  return { ok: false, holder };
}

function ownedLock(path: string, token: string): SpoolLock {
  const owned = async () => {
    try {
      return (JSON.parse(await fsp.readFile(path, 'utf8')) as LockContent).token === token;
    } catch {
      return false;
    }
  };
  return {
    path,
    owned,
    async heartbeat() {
      if (!(await owned())) return false;
      const t = new Date();
      await fsp.utimes(path, t, t).catch(() => undefined);
      return true;
    },
    async release() {
      if (await owned()) await fsp.rm(path, { force: true });
    },
    releaseSync() {
      try {
        if ((JSON.parse(readFileSync(path, 'utf8')) as LockContent).token === token) rmSync(path, { force: true });
      } catch {
        /* gone already, or not ours */
      }
    },
  };
}

/** The one line a second landing on the same spool prints before it exits. */
export function lockRefusal(dir: string, holder: LockHolder): string {
  const who = Number.isInteger(holder.pid)
    ? `pid ${holder.pid}${holder.host && holder.host !== hostname() ? ` on ${holder.host}` : ''}`
    : 'unknown';
  return (
    `LANDING_SPOOL_DIR ${dir} is in use by another landing process (${who}): give each landing its own spool directory, ` +
    `or stop the other one (a lock left by a dead process is taken over)`
  );
}
