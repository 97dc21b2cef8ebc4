/**
 * One replaying landing per spool directory: an exclusive flock(2) on `<dir>/.lock`, held on an open descriptor for
 * as long as the process replays. The kernel lets go of it when the holder's process ends, however it ends (SIGKILL,
 * the OOM killer, a crash), so a lock left behind is taken over at once, and nothing is guessed from pids: two
 * containers whose landings are both pid 1 on one hostname, sharing a volume, still exclude each other (they share
 * the kernel that holds the lock). Two locks taken in one process exclude each other too (flock belongs to the open
 * file, not to the process).
 * The file holds the holder's `{pid, host, token, started_at}`, for the messages only (who holds it, whose lock was
 * taken over); the holder deletes it when it stops. Node opens every file close-on-exec, so a child process never
 * inherits the lock.
 * flock comes from `fs-ext` (a native addon, built from source at install like better-sqlite3): Node has no flock.
 */
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  constants,
  fstatSync,
  fsyncSync,
  ftruncateSync,
  openSync,
  promises as fsp,
  readFileSync,
  statSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type * as FsExt from 'fs-ext';
import { syncDir } from './spool.server';

export const LOCK_FILE = '.lock';
/** How often the holder checks that `<dir>/.lock` is still its own (someone may have deleted or replaced the file). */
export const LOCK_CHECK_MS = 10_000;

interface LockContent {
  pid: number;
  host: string;
  token: string;
  started_at: string;
}

/** Who holds (or held) the lock, as its file says; `pid` NaN when the file says nothing usable. */
export interface LockHolder {
  pid: number;
  host: string;
}

export interface SpoolLock {
  readonly path: string;
  /** True while `<dir>/.lock` is still the file this process locked, with its content (not deleted or replaced). */
  owned(): Promise<boolean>;
  /** Deletes the lock file (when it is still ours) and lets go of the lock. */
  release(): Promise<void>;
  /** The same, synchronously: for the process's `exit` event, whoever ends the process. */
  releaseSync(): void;
}

export type LockResult = { ok: true; lock: SpoolLock; tookOver: LockHolder | null } | { ok: false; holder: LockHolder };

const requireFromHere = createRequire(import.meta.url);
let flock: typeof FsExt.flockSync | null = null;

/** fs-ext's flockSync, loaded on first use so that an addon that was not built is one clear line, not a crash at load. */
function flockSync(fd: number, flags: 'exnb' | 'un'): void {
  if (!flock) {
    try {
      flock = (requireFromHere('fs-ext') as typeof FsExt).flockSync;
    } catch (err) {
      const why = err instanceof Error ? err.message.split('\n')[0] : String(err);
      throw new Error(
        `the spool lock needs the native addon of the fs-ext package, which cannot be loaded (${why}): ` +
          'run `npm rebuild fs-ext` with install scripts allowed for it',
        { cause: err },
      );
    }
  }
  flock(fd, flags);
}

function holderOf(text: string): LockHolder | null {
  if (text.trim() === '') return null;
  try {
    const content = JSON.parse(text) as Partial<LockContent>;
    return { pid: Number(content.pid), host: String(content.host ?? '') };
  } catch {
    return { pid: Number.NaN, host: '' };
  }
}

/** The holder named in the lock file at `path` (unknown when it cannot be read: a holder is writing it right now). */
function readHolder(path: string): LockHolder {
  try {
    return holderOf(readFileSync(path, 'utf8')) ?? { pid: Number.NaN, host: '' };
  } catch {
    return { pid: Number.NaN, host: '' };
  }
}

/** Whether `path` is still the file open on `fd` (same device and inode). */
function isFileAt(fd: number, path: string): boolean {
  try {
    const [open, named] = [fstatSync(fd), statSync(path)];
    return open.ino === named.ino && open.dev === named.dev;
  } catch {
    return false;
  }
}

/**
 * Takes the lock of `dir`, or says who holds it. Never waits: a held lock is refused at once. `tookOver`: the
 * previous holder's file was still there (it ended without giving the lock back).
 */
export async function acquireSpoolLock(dir: string, now = Date.now()): Promise<LockResult> {
  const path = join(dir, LOCK_FILE);
  const token = randomBytes(12).toString('hex');
  const content: LockContent = { pid: process.pid, host: hostname(), token, started_at: new Date(now).toISOString() };
  // A holder that is giving the lock back deletes the file first: what we locked may be that deleted file. Try again.
  for (let attempt = 0; attempt < 3; attempt += 1) {
    const fd = openSync(path, constants.O_RDWR | constants.O_CREAT, 0o600);
    try {
      flockSync(fd, 'exnb');
    } catch (err) {
      closeSync(fd);
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'EAGAIN' || code === 'EWOULDBLOCK') return { ok: false, holder: readHolder(path) };
      throw err;
    }
    if (!isFileAt(fd, path)) {
      closeSync(fd);
      continue;
    }
    const previous = holderOf(readFileSync(fd, 'utf8'));
    ftruncateSync(fd, 0);
    writeSync(fd, `${JSON.stringify(content)}\n`, 0);
    fsyncSync(fd);
    await syncDir(dir);
    return { ok: true, lock: heldLock(path, fd, token), tookOver: previous };
  }
  return { ok: false, holder: readHolder(path) };
}

function heldLock(path: string, fd: number, token: string): SpoolLock {
  let held = true;
  const ours = (text: string) => {
    try {
      return (JSON.parse(text) as LockContent).token === token;
    } catch {
      return false;
    }
  };
  const ownedSync = () => {
    try {
      return held && isFileAt(fd, path) && ours(readFileSync(path, 'utf8'));
    } catch {
      return false;
    }
  };
  const letGo = () => {
    if (!held) return;
    held = false;
    try {
      flockSync(fd, 'un');
    } finally {
      closeSync(fd);
    }
  };
  return {
    path,
    async owned() {
      if (!held) return false;
      try {
        return isFileAt(fd, path) && ours(await fsp.readFile(path, 'utf8'));
      } catch {
        return false;
      }
    },
    async release() {
      // Deleted before the lock goes, so that nobody can lock this file after we let go of it.
      if (await this.owned()) await fsp.rm(path, { force: true });
      letGo();
    },
    releaseSync() {
      try {
        if (ownedSync()) unlinkSync(path);
      } catch {
        /* gone already */
      }
      letGo();
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
