/**
 * The landing's durable spool: a request that did not reach the server's database (route `fallback` or
 * `lost`) is written to LANDING_SPOOL_DIR before the visitor gets the answer, and replayed to the server later
 * (spool-replay.server.ts). One JSON file per request_id, named `<submitted ms, 13 digits>-<request_id>.json` so that
 * the directory listing is the replay order; mode 0600 in a 0700 directory (it holds personal data); every write is
 * atomic and durable: a temporary file in the same directory, fsync, rename, fsync of the directory.
 * Every entry is checked for its shape when it is read (`checkEntry`): a file that is not one (not JSON, a field missing
 * or of the wrong kind) is set aside like an entry the server refused with 422. Set-aside entries wait in `rejected/`,
 * next to a `<name>.reason` file saying when and why, until ops deal with them or LANDING_SPOOL_REJECTED_DAYS pass.
 */
import { randomBytes } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import { parseIsoTime, type LeadRequestBody } from '@stickers/shared';
import type { LandingEnv } from '../env.server';
import type { DeliveryResult, FallbackMessage } from './deliver-request.server';
import { fallbackSignature } from './fallback-signature.server';

/** The landing's route when the visitor's request was handled (`server-rejected` is a 422: never spooled). */
export type SpoolRoute = 'fallback' | 'lost';

/** Where the fallback message is, as the spool keeps it. */
export interface LateFallback {
  chat_id: string;
  message_id: number;
  sent_at: string;
}

/** The fallback message as a replay claims it: where it is, signed with the bot token (fallback-signature.server.ts). */
export interface LateFallbackClaim extends LateFallback {
  /** Absent only when the landing has no bot token any more to sign with. */
  sig?: string;
}

/** The `late` object of a replayed `POST /leads` (the body the server reads for a late lead, docs/api.md). */
export interface LateDelivery {
  /** When the landing first handled the visitor's request (ISO 8601 UTC, ms). */
  submitted_at: string;
  route: SpoolRoute;
  /** The server's status (`"503"`, `"429 secret"`), `"timeout"` or `"network"`. */
  reason: string;
  /** Only when Telegram accepted the fallback message. */
  fallback?: LateFallbackClaim;
}

/** A replayed `POST /leads` body: the normal body (same request_id, fields, client_ip) plus `late`. */
export type LateLeadRequestBody = LeadRequestBody & { late: LateDelivery };

/** One spool file. */
export interface SpoolEntry {
  version: 1;
  request_id: string;
  submitted_at: string;
  route: SpoolRoute;
  reason: string;
  fallback?: LateFallback;
  /** What the form path sent (or tried to send) to the server. */
  body: LeadRequestBody;
  /** Failed replays so far (they set the backoff). */
  attempts: number;
  next_attempt_at: string;
  /** Bumped by every submission that writes the entry: a replay of an older revision does not delete a newer one. */
  revision: number;
  /** The last replay's failure (status, `timeout`, `network`), without personal data. */
  last_error?: string;
  updated_at: string;
}

export interface SpoolFile {
  name: string;
  requestId: string;
  submittedMs: number;
}

/** The first replay of a new entry: as long as the first step of the backoff. */
export const FIRST_REPLAY_DELAY_MS = 5_000;
export const REJECTED_DIR = 'rejected';
/** Beside a set-aside entry in `rejected/`: `<entry name>.reason`, one line, when and why (no personal data). */
export const REASON_SUFFIX = '.reason';
const ENTRY_NAME = /^(\d{13})-([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.json$/;

export function entryName(submittedMs: number, requestId: string): string {
  return `${String(Math.max(0, Math.trunc(submittedMs))).padStart(13, '0')}-${requestId}.json`;
}

export function parseEntryName(name: string): SpoolFile | null {
  const m = ENTRY_NAME.exec(name);
  return m ? { name, requestId: m[2], submittedMs: Number(m[1]) } : null;
}

/**
 * A spool file whose content is not a spool entry. `reason` names the fields only, never a value (values may be
 * personal data, and the reason goes to the log, the admin chat and `rejected/<name>.reason`).
 */
export class MalformedEntryError extends Error {
  constructor(readonly reason: string) {
    super(`not a spool entry: ${reason}`);
    this.name = 'MalformedEntryError';
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isCount = (v: unknown, min: number) => typeof v === 'number' && Number.isSafeInteger(v) && v >= min;
const isTime = (v: unknown) => parseIsoTime(v) !== null;
const kindOf = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v);

/**
 * The shape of one spool file's parsed content, checked field by field, for the entry named `requestId`: what the
 * replay reads must be there and of its kind, or the whole file is refused with every problem named. The field values
 * themselves (the visitor's name, phone, …) are the server's to check: a refusal there is a 422.
 */
export function checkEntry(value: unknown, requestId: string): SpoolEntry {
  if (!isObject(value)) throw new MalformedEntryError(`the file holds ${kindOf(value)}, not an object`);
  const problems: string[] = [];
  if (value.version !== 1) problems.push('version is not 1');
  if (value.request_id !== requestId) problems.push("request_id is not the file name's");
  if (!isTime(value.submitted_at)) problems.push('submitted_at is not a time');
  if (value.route !== 'fallback' && value.route !== 'lost') problems.push('route is not fallback or lost');
  if (typeof value.reason !== 'string' || value.reason === '') problems.push('reason is not a text');
  const fallback = value.fallback;
  if (
    fallback !== undefined &&
    fallback !== null &&
    !(isObject(fallback) && typeof fallback.chat_id === 'string' && isCount(fallback.message_id, 1) && isTime(fallback.sent_at))
  ) {
    problems.push('fallback is not {chat_id, message_id, sent_at}');
  }
  if (!isObject(value.body) || value.body.request_id !== requestId) problems.push('body is not an object with this request_id');
  if (!isCount(value.attempts, 0)) problems.push('attempts is not a whole number from 0');
  if (!isTime(value.next_attempt_at)) problems.push('next_attempt_at is not a time');
  if (!isCount(value.revision, 1)) problems.push('revision is not a whole number from 1');
  if (value.last_error !== undefined && typeof value.last_error !== 'string') problems.push('last_error is not a text');
  if (value.updated_at !== undefined && typeof value.updated_at !== 'string') problems.push('updated_at is not a text');
  if (problems.length > 0) throw new MalformedEntryError(problems.join('; '));
  const entry = { ...value } as unknown as SpoolEntry;
  if (fallback === null) delete entry.fallback;
  return entry;
}

/** Why a spool file could not be used, without its content: the shape problems, `not JSON`, or the file error's code. */
export function unusableReason(err: unknown): string {
  if (err instanceof MalformedEntryError) return err.reason;
  if (err instanceof SyntaxError) return 'not JSON';
  const code = (err as NodeJS.ErrnoException | null)?.code;
  return `unreadable (${code ?? (err instanceof Error ? err.name : 'error')})`;
}

/**
 * The body a replay sends: the normal body plus `late`. A fallback message is claimed with its signature under
 * `botToken` (the landing's TELEGRAM_BOT_TOKEN, the one the fallback sends with), computed now rather than kept in the
 * entry, so that it is made with the token the server has now; without a token the claim goes unsigned.
 */
export function lateBody(entry: SpoolEntry, botToken: string | null): LateLeadRequestBody {
  const fallback = entry.fallback;
  const claim: LateFallbackClaim | undefined = fallback
    ? {
        chat_id: fallback.chat_id,
        message_id: fallback.message_id,
        sent_at: fallback.sent_at,
        ...(botToken ? { sig: fallbackSignature(botToken, entry.request_id, fallback.chat_id, fallback.message_id) } : {}),
      }
    : undefined;
  return {
    ...entry.body,
    late: {
      submitted_at: entry.submitted_at,
      route: entry.route,
      reason: entry.reason,
      ...(claim ? { fallback: claim } : {}),
    },
  };
}

/**
 * What the spool shares within the process, per directory: a lock for its file operations, the counters and the
 * replay loop's wake-up. Kept on globalThis because in development Vite can load the server modules more than once.
 */
interface SpoolShared {
  tail: Promise<unknown>;
  lastDepth: number | null;
  dropped: number;
  replayed: number;
  wake: (() => void) | null;
  /** Files the form path set aside (not entries), for the replay's alert. */
  asides: { requestId: string; reason: string }[];
}

const SHARED_KEY = Symbol.for('stickers.landing.spool');

export function spoolShared(dir: string): SpoolShared {
  const registry = ((globalThis as Record<symbol, unknown>)[SHARED_KEY] ??= new Map<string, SpoolShared>()) as Map<string, SpoolShared>;
  let state = registry.get(dir);
  if (!state) {
    state = { tail: Promise.resolve(), lastDepth: null, dropped: 0, replayed: 0, wake: null, asides: [] };
    registry.set(dir, state);
  }
  return state;
}

/** Fsyncs a directory, so that a rename or unlink in it survives a crash. */
export async function syncDir(dir: string): Promise<void> {
  const handle = await fsp.open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Writes `name` in `dir` atomically and durably, mode 0600: temporary file, fsync, rename, fsync of the directory. */
export async function writeDurably(dir: string, name: string, data: string): Promise<void> {
  const tmp = join(dir, `.tmp-${name}-${randomBytes(4).toString('hex')}`);
  const handle = await fsp.open(tmp, 'wx', 0o600);
  try {
    try {
      await handle.writeFile(data);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await fsp.rename(tmp, join(dir, name));
  } catch (err) {
    // A full disk mid-write leaves no part of a visitor's request behind.
    await fsp.rm(tmp, { force: true });
    throw err;
  }
  await syncDir(dir);
}

const seconds = (ms: number) => Math.max(0, Math.floor(ms / 1000));

/** The spool directory's entries and file operations. Every change goes through `exclusive` (one at a time). */
export class SpoolStore {
  readonly rejectedDir: string;

  constructor(readonly dir: string) {
    this.rejectedDir = join(dir, REJECTED_DIR);
  }

  /** Runs `fn` after every other file operation of this process on this spool has finished. */
  exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const shared = spoolShared(this.dir);
    const run = shared.tail.then(fn, fn);
    shared.tail = run.catch(() => undefined);
    return run;
  }

  /** The entries waiting for replay, oldest first (by name: the submitted time). */
  async files(): Promise<SpoolFile[]> {
    let names: string[];
    try {
      names = await fsp.readdir(this.dir);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw err;
    }
    return names
      .sort()
      .map(parseEntryName)
      .filter((f): f is SpoolFile => f !== null);
  }

  async rejectedFiles(): Promise<SpoolFile[]> {
    const names = await fsp.readdir(this.rejectedDir).catch(() => [] as string[]);
    return names
      .sort()
      .map(parseEntryName)
      .filter((f): f is SpoolFile => f !== null);
  }

  /** Files in the directory that are not entries, locks or temporary files (a hand-made copy, garbage). */
  async strays(): Promise<string[]> {
    const names = await fsp.readdir(this.dir).catch(() => [] as string[]);
    return names.filter((n) => !n.startsWith('.') && n !== REJECTED_DIR && parseEntryName(n) === null);
  }

  /**
   * The entry in file `name`, checked (`checkEntry`); null when the file is gone. Throws `MalformedEntryError` when it
   * is not a spool entry, a `SyntaxError` when it is not JSON, the file error when it cannot be read.
   */
  async read(name: string): Promise<SpoolEntry | null> {
    let text: string;
    try {
      text = await fsp.readFile(join(this.dir, name), 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
    const file = parseEntryName(name);
    if (!file) throw new MalformedEntryError('the file name is not <13 digits>-<request_id>.json');
    return checkEntry(JSON.parse(text) as unknown, file.requestId);
  }

  /** `read`, with a file that is not a usable entry given as its reason instead of thrown. */
  private async readOrReason(name: string): Promise<{ entry: SpoolEntry | null; unusable?: string }> {
    try {
      return { entry: await this.read(name) };
    } catch (err) {
      return { entry: null, unusable: unusableReason(err) };
    }
  }

  async find(requestId: string): Promise<SpoolFile | null> {
    return (await this.files()).find((f) => f.requestId === requestId) ?? null;
  }

  /** The fallback message this request's entry records, if any. */
  async fallbackOf(requestId: string): Promise<FallbackMessage | undefined> {
    const file = await this.find(requestId);
    const f = file ? (await this.readOrReason(file.name)).entry?.fallback : undefined;
    return f ? { chatId: f.chat_id, messageId: f.message_id, sentAt: f.sent_at } : undefined;
  }

  /**
   * Keeps a request that did not reach the server's database. A second submission of the same request_id rewrites
   * its entry: the first `submitted_at` stays (and with it the file name), the newest route, reason and fields are
   * taken, and the first fallback message is kept (a later `lost` keeps it too), so the server can still adopt it.
   */
  async keep(input: {
    requestId: string;
    body: LeadRequestBody;
    submittedAt: number;
    route: SpoolRoute;
    reason: string;
    fallback?: FallbackMessage;
    now: number;
  }): Promise<SpoolEntry> {
    const entry = await this.exclusive(async () => {
      const existing = await this.find(input.requestId);
      const found = existing ? await this.readOrReason(existing.name) : { entry: null };
      if (existing && found.unusable !== undefined) {
        // Not an entry (a hand edit?): kept aside with its reason, and this submission starts a fresh one.
        await this.moveAside(existing.name, found.unusable, input.now);
        spoolShared(this.dir).asides.push({ requestId: input.requestId, reason: found.unusable });
        console.error(
          `[spool] ${input.requestId} malformed (${found.unusable}): moved to ${this.rejectedDir}, not retried; ` +
            'the new submission is kept as a new entry',
        );
      }
      const previous = found.entry;
      // The first fallback message is the one kept: the group has it, and the server will adopt or answer it.
      const fallback: LateFallback | undefined =
        previous?.fallback ??
        (input.fallback
          ? { chat_id: input.fallback.chatId, message_id: input.fallback.messageId, sent_at: input.fallback.sentAt }
          : undefined);
      const attempts = previous?.attempts ?? 0;
      const written: SpoolEntry = {
        version: 1,
        request_id: input.requestId,
        submitted_at: previous?.submitted_at ?? new Date(input.submittedAt).toISOString(),
        route: fallback ? 'fallback' : input.route,
        reason: input.reason,
        ...(fallback ? { fallback } : {}),
        body: input.body,
        attempts,
        next_attempt_at: new Date(input.now + FIRST_REPLAY_DELAY_MS).toISOString(),
        revision: (previous?.revision ?? 0) + 1,
        ...(previous?.last_error ? { last_error: previous.last_error } : {}),
        updated_at: new Date(input.now).toISOString(),
      };
      const name = existing?.name ?? entryName(input.submittedAt, input.requestId);
      await writeDurably(this.dir, name, `${JSON.stringify(written, null, 2)}\n`);
      return written;
    });
    const again = entry.revision > 1 ? `, rewritten (submission ${entry.revision})` : '';
    console.log(`[spool] ${input.requestId} kept for replay (${entry.route} ${input.reason}${again})`);
    await this.noteDepth(input.now);
    spoolShared(this.dir).wake?.();
    return entry;
  }

  /**
   * The form path delivered this request_id to the server after all (the visitor sent it again): its entry is done,
   * unless a fallback message of it is in the group: then the replay still tells the server about that message.
   */
  async settle(requestId: string, now: number): Promise<boolean> {
    const removed = await this.exclusive(async () => {
      const file = await this.find(requestId);
      // A file that is not an entry is left to the replay, which sets it aside.
      const entry = file ? (await this.readOrReason(file.name)).entry : null;
      if (!file || !entry || entry.fallback) return false;
      await fsp.rm(join(this.dir, file.name), { force: true });
      await syncDir(this.dir);
      return true;
    });
    if (removed) {
      console.log(`[spool] ${requestId} delivered by the form (sent again): entry removed`);
      await this.noteDepth(now);
    }
    return removed;
  }

  /** Rewrites an entry in place (the replay's attempts), unless it is gone. */
  async update(name: string, change: (entry: SpoolEntry) => SpoolEntry): Promise<SpoolEntry | null> {
    return this.exclusive(async () => {
      const entry = await this.read(name);
      if (!entry) return null;
      const next = change(entry);
      await writeDurably(this.dir, name, `${JSON.stringify(next, null, 2)}\n`);
      return next;
    });
  }

  /** Deletes an entry the server has; false when a newer submission rewrote it meanwhile (it is replayed again). */
  async remove(name: string, revision?: number): Promise<boolean> {
    return this.exclusive(async () => {
      if (revision !== undefined) {
        const { entry, unusable } = await this.readOrReason(name);
        // Changed meanwhile, into something that is not an entry: the replay's next pass sets it aside.
        if (unusable !== undefined || (entry && entry.revision !== revision)) return false;
      }
      await fsp.rm(join(this.dir, name), { force: true });
      await syncDir(this.dir);
      return true;
    });
  }

  /**
   * Moves an entry to `rejected/` with `<name>.reason` beside it (`<time> <reason>`): never retried; deleted once
   * LANDING_SPOOL_REJECTED_DAYS have passed since it was set aside or last edited (`expireRejected`).
   */
  async reject(name: string, reason: string, now: number): Promise<void> {
    await this.exclusive(() => this.moveAside(name, reason, now));
  }

  private async moveAside(name: string, reason: string, now: number): Promise<void> {
    await fsp.mkdir(this.rejectedDir, { recursive: true, mode: 0o700 });
    const target = join(this.rejectedDir, name);
    await fsp.rename(join(this.dir, name), target);
    await writeDurably(this.rejectedDir, `${name}${REASON_SUFFIX}`, `${new Date(now).toISOString()} ${reason.replace(/\s+/g, ' ')}\n`);
    // Its time in rejected/ counts from now (the later of the two files' times, see expireRejected).
    const t = new Date(now);
    await fsp.utimes(target, t, t).catch(() => undefined);
    await fsp.utimes(join(this.rejectedDir, `${name}${REASON_SUFFIX}`), t, t).catch(() => undefined);
    await syncDir(this.dir);
  }

  /**
   * Deletes what has been in `rejected/` for longer than `maxAgeMs`, counted from the later of the entry's and its
   * reason file's modification times (set when it was set aside; an edit by ops starts the time again), and reason
   * files whose entry is gone (moved back for replay). Returns the request ids of the entries deleted.
   */
  async expireRejected(now: number, maxAgeMs: number): Promise<string[]> {
    return this.exclusive(async () => {
      const names = await fsp.readdir(this.rejectedDir).catch(() => [] as string[]);
      const present = new Set(names);
      const deleted: string[] = [];
      // Whole milliseconds: a time set with utimes reads back a fraction of a millisecond off.
      const mtime = async (name: string) =>
        Math.round((await fsp.stat(join(this.rejectedDir, name)).catch(() => null))?.mtimeMs ?? -Infinity);
      for (const name of names) {
        if (name.endsWith(REASON_SUFFIX)) {
          if (!present.has(name.slice(0, -REASON_SUFFIX.length))) await fsp.rm(join(this.rejectedDir, name), { force: true });
          continue;
        }
        if (name.startsWith('.tmp-')) {
          if (now - (await mtime(name)) > 60_000) await fsp.rm(join(this.rejectedDir, name), { force: true });
          continue;
        }
        const file = parseEntryName(name);
        if (!file) continue;
        const since = Math.max(await mtime(name), await mtime(`${name}${REASON_SUFFIX}`));
        if (!(now - since > maxAgeMs)) continue;
        await fsp.rm(join(this.rejectedDir, name), { recursive: true, force: true });
        await fsp.rm(join(this.rejectedDir, `${name}${REASON_SUFFIX}`), { force: true });
        deleted.push(file.requestId);
      }
      if (deleted.length > 0) await syncDir(this.rejectedDir);
      return deleted;
    });
  }

  /** Why an entry in `rejected/` was set aside (its `.reason` file, without the time); null when unknown. */
  async rejectedReason(name: string): Promise<string | null> {
    const text = await fsp.readFile(join(this.rejectedDir, `${name}${REASON_SUFFIX}`), 'utf8').catch(() => null);
    return text === null ? null : text.trim().replace(/^\S+ /, '');
  }

  /** Removes temporary files a crash left behind (older than a minute: a write in progress is never older). */
  async sweepTemporary(now: number): Promise<void> {
    const names = await fsp.readdir(this.dir).catch(() => [] as string[]);
    for (const name of names.filter((n) => n.startsWith('.tmp-'))) {
      const stat = await fsp.stat(join(this.dir, name)).catch(() => null);
      if (stat && now - stat.mtimeMs > 60_000) await fsp.rm(join(this.dir, name), { force: true });
    }
  }

  async stats(now: number): Promise<{ depth: number; oldestAgeSeconds: number; rejected: number }> {
    const files = await this.files();
    return {
      depth: files.length,
      oldestAgeSeconds: files.length ? seconds(now - files[0].submittedMs) : 0,
      rejected: (await this.rejectedFiles()).length,
    };
  }

  /** One log line each time the number of waiting entries changes. */
  async noteDepth(now: number): Promise<void> {
    try {
      const { depth, oldestAgeSeconds } = await this.stats(now);
      const shared = spoolShared(this.dir);
      if (shared.lastDepth === depth) return;
      shared.lastDepth = depth;
      console.log(`[spool] depth ${depth}${depth ? ` (oldest ${oldestAgeSeconds} s)` : ''}`);
    } catch {
      /* the depth line is informative only */
    }
  }
}

/**
 * The form path's part, before the visitor gets the answer: a `fallback` or `lost` request with a server configured
 * is kept for replay; a `server` delivery settles an entry of the same request_id. A failure is logged at error
 * level and changes nothing for the visitor (the fallback message is then the only trace).
 */
/** The fallback message a spooled request already has in the group, if any (a form sent again must not send another). */
export async function spooledFallback(env: LandingEnv, requestId: string): Promise<FallbackMessage | undefined> {
  return env.spool ? new SpoolStore(env.spool.dir).fallbackOf(requestId).catch(() => undefined) : undefined;
}

export async function spoolDelivery(env: LandingEnv, requestId: string, result: DeliveryResult, submittedAt: number): Promise<void> {
  if (!env.spool || !result.body) return;
  const store = new SpoolStore(env.spool.dir);
  const now = Date.now();
  try {
    if (result.route === 'fallback' || result.route === 'lost') {
      await store.keep({
        requestId,
        body: result.body,
        submittedAt,
        route: result.route,
        reason: result.reason ?? (result.status ? String(result.status) : 'network'),
        fallback: result.fallback,
        now,
      });
    } else if (result.route === 'server') {
      await store.settle(requestId, now);
    }
  } catch (err) {
    const why = err instanceof Error ? `${(err as NodeJS.ErrnoException).code ?? err.name}: ${err.message}` : String(err);
    console.error(`[spool] ${requestId} NOT written to the spool (${result.route}): ${why.slice(0, 300)}`);
  }
}

/** The spool's metrics in the Prometheus text format. */
export async function spoolMetricsText(env: LandingEnv, now = Date.now()): Promise<string> {
  const stats = env.spool ? await new SpoolStore(env.spool.dir).stats(now) : { depth: 0, oldestAgeSeconds: 0, rejected: 0 };
  const shared = env.spool ? spoolShared(env.spool.dir) : { dropped: 0, replayed: 0 };
  const metric = (name: string, type: string, help: string, value: number) =>
    `# HELP ${name} ${help}\n# TYPE ${name} ${type}\n${name} ${value}\n`;
  return [
    metric('landing_spool_depth', 'gauge', 'Requests in the spool waiting to be replayed to the server.', stats.depth),
    metric('landing_spool_oldest_age_seconds', 'gauge', 'Age of the oldest waiting request (0 when none).', stats.oldestAgeSeconds),
    metric('landing_spool_rejected', 'gauge', 'Requests the server refused with 422, kept in rejected/ for ops.', stats.rejected),
    metric('landing_spool_dropped_total', 'counter', 'Requests dropped past LANDING_SPOOL_MAX_AGE_DAYS.', shared.dropped),
    metric('landing_spool_replayed_total', 'counter', 'Requests the replay delivered to the server (201/200).', shared.replayed),
  ].join('');
}
