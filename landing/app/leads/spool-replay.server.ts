/**
 * The spool's replay: one loop per landing process, holding `<dir>/.lock`, sends the waiting entries to
 * `POST /leads` with the secret and the form path's 5 s timeout, oldest first, one at a time, each with its own
 * backoff (5 s, 15 s, 60 s, then every 5 min; `attempts` and `next_attempt_at` are kept in the entry). 201/200: the
 * entry is deleted, and the server is taken to be back: the entries waiting out a failure's backoff are replayed at once
 * after it, still one at a time and oldest first, until a replay fails again. 422: moved to `rejected/` (never retried), logged at error level, alerted; so is a file that is not
 * a spool entry, as soon as a pass reads it. 429: every replay waits for `Retry-After`. Entries past
 * LANDING_SPOOL_MAX_AGE_DAYS are dropped (logged, counted); entries in `rejected/` past LANDING_SPOOL_REJECTED_DAYS are
 * deleted. No entry can hold up the others: one that fails in an unexpected way is skipped for a while.
 * The admin chat (ADMIN_CHAT_ID, through the fallback's bot) gets an alert when an entry waits for more than an hour
 * or is rejected, at most one per kind per 30 minutes; the throttle is kept in the spool directory.
 * No personal data in any log line or alert: request ids, counts, statuses.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DEFAULT_LOCALE, SECRET_HEADER, type Locale, errorText } from '@stickers/shared';
import { LANDING_MESSAGES } from '~/i18n';
import { getEnv, type LandingEnv, type SpoolConfig } from '../env.server';
import { SERVER_TIMEOUT_MS, sendTelegramMessage } from './deliver-request.server';
import { acquireSpoolLock, LOCK_CHECK_MS, lockRefusal, type SpoolLock } from './spool-lock.server';
import {
  lateBody,
  spoolMetricsText,
  spoolShared,
  SpoolStore,
  unusableReason,
  writeDurably,
  type SpoolEntry,
  type SpoolFile,
} from './spool.server';

/** The wait after the first, second, third and every later failed replay of an entry (its first replay: 5 s). */
export const REPLAY_BACKOFF_MS = [15_000, 60_000, 300_000] as const;
/** A 429 without a usable Retry-After pauses the replays this long; a longer Retry-After is capped at an hour. */
export const DEFAULT_RETRY_AFTER_MS = 60_000;
export const MAX_RETRY_AFTER_MS = 60 * 60_000;
/** The loop looks at the directory at least this often (max age, alerts, entries another module instance wrote). */
export const IDLE_RECHECK_MS = 60_000;
export const STALE_ALERT_AGE_MS = 60 * 60_000;
export const ALERT_INTERVAL_MS = 30 * 60_000;
export const ALERTS_FILE = '.alerts.json';
/** An entry whose handling failed in an unexpected way (not a replay's answer) is left alone this long. */
export const TROUBLED_SKIP_MS = 60_000;
/** How often a replayer deletes expired entries from `rejected/`. */
export const REJECTED_SWEEP_MS = 60_000;

/** When an entry that has failed `attempts` times is tried next, counted from the failure. */
export function backoffMs(attempts: number): number {
  return REPLAY_BACKOFF_MS[Math.min(Math.max(attempts, 1), REPLAY_BACKOFF_MS.length) - 1];
}

/** Time for the replay: the real one, or a test's. `sleep` resolves early when `signal` aborts. */
export interface ReplayClock {
  now(): number;
  sleep(ms: number, signal: AbortSignal): Promise<void>;
}

export const realClock: ReplayClock = {
  now: () => Date.now(),
  sleep: (ms, signal) =>
    new Promise<void>((resolve) => {
      if (signal.aborted) return resolve();
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        resolve();
      }
      signal.addEventListener('abort', done, { once: true });
    }),
};

export interface ReplayEnv {
  spool: SpoolConfig;
  leadsEndpoint: string;
  leadsSecret: string;
  telegram: LandingEnv['telegram'];
  adminChatId: string | null;
  /** LANDING_LOCALE: the alerts' language (`ru` when absent). */
  locale?: Locale;
}

export type AlertKind = 'stale' | 'rejected';
export type AlertResult = 'sent' | 'throttled' | 'no_target' | 'failed';

const iso = (ms: number) => new Date(ms).toISOString();

function duration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 120) return `${s} s`;
  if (s < 2 * 3600) return `${Math.round(s / 60)} min`;
  if (s < 2 * 86400) return `${(s / 3600).toFixed(1)} h`;
  return `${(s / 86400).toFixed(1)} d`;
}

/** Seconds (or an HTTP date) of a Retry-After header, as milliseconds from `now`, within bounds. */
export function retryAfterMs(header: string | null, now: number): number {
  let ms = Number.NaN;
  if (header && /^\s*\d+\s*$/.test(header)) ms = Number(header) * 1000;
  else if (header) ms = Date.parse(header) - now;
  if (!Number.isFinite(ms) || ms <= 0) return DEFAULT_RETRY_AFTER_MS;
  return Math.min(Math.max(ms, 1000), MAX_RETRY_AFTER_MS);
}

/** The field codes of a 422 (`phone invalid, name too_short`): no values, so no personal data. */
function fieldCodes(body: string): string {
  try {
    const errors = (JSON.parse(body) as { errors?: Record<string, unknown> }).errors ?? {};
    const list = Object.entries(errors).map(([field, code]) => `${field} ${String(code)}`.replace(/[^\w .-]/g, ''));
    return list.length ? list.join(', ').slice(0, 200) : 'no field codes';
  } catch {
    return 'no field codes';
  }
}

function rateLimitWhy(body: string): string {
  try {
    const why = (JSON.parse(body) as { why?: unknown }).why;
    return typeof why === 'string' ? ` ${why.replace(/\W/g, '').slice(0, 20)}` : '';
  } catch {
    return '';
  }
}

/** The spool's alerts to the admin chat, throttled per kind; the last send times live in `<dir>/.alerts.json`. */
export class SpoolAlerts {
  constructor(
    private readonly env: Pick<ReplayEnv, 'spool' | 'telegram' | 'adminChatId'>,
    private readonly clock: Pick<ReplayClock, 'now'>,
  ) {}

  private async sentTimes(): Promise<Partial<Record<AlertKind, number>>> {
    try {
      return JSON.parse(await readFile(join(this.env.spool.dir, ALERTS_FILE), 'utf8')) as Partial<Record<AlertKind, number>>;
    } catch {
      return {};
    }
  }

  private async record(times: Partial<Record<AlertKind, number>>): Promise<void> {
    await writeDurably(this.env.spool.dir, ALERTS_FILE, `${JSON.stringify(times)}\n`);
  }

  /** Sends `text` unless an alert of `kind` went out less than 30 minutes ago. Never throws. */
  async send(kind: AlertKind, text: string): Promise<AlertResult> {
    try {
      const now = this.clock.now();
      const times = await this.sentTimes();
      const previous = times[kind];
      if (previous !== undefined && now - previous < ALERT_INTERVAL_MS) return 'throttled';
      await this.record({ ...times, [kind]: now });
      const { telegram, adminChatId } = this.env;
      if (!telegram || !adminChatId) {
        console.error(`[spool] alert ${kind} not sent (no ADMIN_CHAT_ID or TELEGRAM_BOT_TOKEN): ${text}`);
        return 'no_target';
      }
      const sent = await sendTelegramMessage(telegram, adminChatId, { text, entities: [] });
      if (sent.ok) {
        console.log(`[spool] alert ${kind} sent`);
        return 'sent';
      }
      // Given back, so that the next occurrence tries again.
      await this.record({ ...times, [kind]: previous });
      console.error(`[spool] alert ${kind} failed: ${sent.detail}`);
      return 'failed';
    } catch (err) {
      console.error(`[spool] alert ${kind} failed: ${errorText(err)}`);
      return 'failed';
    }
  }
}

export interface ReplayerOptions {
  env: ReplayEnv;
  clock?: ReplayClock;
  /** The directory's lock, when this replayer holds it (checked before each replay and every 10 s while running). */
  lock?: SpoolLock | null;
}

export class SpoolReplayer {
  readonly store: SpoolStore;
  readonly alerts: SpoolAlerts;
  private readonly env: ReplayEnv;
  private readonly clock: ReplayClock;
  private readonly lock: SpoolLock | null;
  /** A 429 pauses every replay until then. */
  private pausedUntil = 0;
  /**
   * The last replay the server answered took its entry (201/200) or refused it (422), and none has failed since: the
   * server is back, so an entry waiting out the backoff of an earlier failure is due now rather than at its time.
   */
  private serverBack = false;
  private readonly stopping = new AbortController();
  private nap: AbortController | null = null;
  private woken = false;
  private running: Promise<void> | null = null;
  private lockCheckTimer: ReturnType<typeof setInterval> | null = null;
  /** Entries whose handling threw (file name → not before): the others go on meanwhile. */
  private readonly troubled = new Map<string, number>();
  private rejectedSweptAt = Number.NEGATIVE_INFINITY;

  constructor(options: ReplayerOptions) {
    this.env = options.env;
    this.clock = options.clock ?? realClock;
    this.lock = options.lock ?? null;
    this.store = new SpoolStore(this.env.spool.dir);
    this.alerts = new SpoolAlerts(this.env, this.clock);
  }

  /**
   * One pass: deletes expired entries of `rejected/` (at most once a minute), drops entries past the maximum age,
   * alerts on an entry waiting for more than an hour, sets aside every file read that is not an entry, and replays the
   * oldest entry that is due (at most one). Returns how long nothing needs doing (0: go again at once).
   */
  async step(): Promise<number> {
    const now = this.clock.now();
    if (now - this.rejectedSweptAt >= REJECTED_SWEEP_MS) {
      this.rejectedSweptAt = now;
      await this.expireRejected(now);
    }
    await this.alertAsides();
    const waiting: SpoolFile[] = [];
    for (const file of await this.store.files()) {
      if (now - file.submittedMs <= this.env.spool.maxAgeMs) waiting.push(file);
      else if (this.skipUntil(file, now) === null) await this.guarded(file, now, () => this.drop(file, now));
    }
    if (waiting.length > 0 && now - waiting[0].submittedMs > STALE_ALERT_AGE_MS) await this.alertStale(waiting, now);
    if (this.pausedUntil > now) return this.pausedUntil - now;

    let soonest = IDLE_RECHECK_MS;
    for (const file of waiting) {
      const skipUntil = this.skipUntil(file, now);
      if (skipUntil !== null) {
        soonest = Math.min(soonest, skipUntil - now);
        continue;
      }
      const outcome = await this.guarded(file, now, async () => {
        let entry: SpoolEntry | null;
        try {
          entry = await this.store.read(file.name);
        } catch (err) {
          await this.setAside(file, unusableReason(err), now);
          return 'next';
        }
        if (!entry) return 'next';
        const due = Date.parse(entry.next_attempt_at);
        // An entry that has failed waits for its backoff unless the server took another one since; its first replay
        // (5 s after the submission) keeps its time.
        if (due > now && !(this.serverBack && entry.attempts > 0)) {
          soonest = Math.min(soonest, due - now);
          return 'next';
        }
        await this.replay(file, entry);
        return 'replayed';
      });
      if (outcome === 'replayed') return 0;
    }
    return soonest;
  }

  /** Until when `file` is left alone after its handling threw; null when it is not. */
  private skipUntil(file: SpoolFile, now: number): number | null {
    const until = this.troubled.get(file.name);
    return until !== undefined && until > now ? until : null;
  }

  /**
   * Runs one entry's part of a pass. Should it throw (a file the process may not move, a disk error on its update),
   * the entry is logged and left alone for TROUBLED_SKIP_MS, and the pass goes on with the others.
   */
  private async guarded<T>(file: SpoolFile, now: number, work: () => Promise<T>): Promise<T | 'failed'> {
    try {
      const result = await work();
      this.troubled.delete(file.name);
      return result;
    } catch (err) {
      this.troubled.set(file.name, now + TROUBLED_SKIP_MS);
      const why = err instanceof Error ? `${(err as NodeJS.ErrnoException).code ?? err.name}: ${err.message}` : String(err);
      console.error(`[spool] ${file.requestId} could not be handled (${why.slice(0, 200)}): left alone for ${duration(TROUBLED_SKIP_MS)}`);
      return 'failed';
    }
  }

  /** Deletes the entries of `rejected/` older than LANDING_SPOOL_REJECTED_DAYS. Never throws. */
  private async expireRejected(now: number): Promise<void> {
    try {
      const days = this.env.spool.rejectedMaxAgeMs / 86_400_000;
      for (const id of await this.store.expireRejected(now, this.env.spool.rejectedMaxAgeMs)) {
        console.error(`[spool] ${id} deleted from ${this.store.rejectedDir}: set aside more than LANDING_SPOOL_REJECTED_DAYS=${days} ago`);
      }
    } catch (err) {
      console.error(`[spool] rejected/ could not be cleaned: ${err instanceof Error ? err.message.slice(0, 200) : String(err)}`);
    }
  }

  /** The alert for files the form path set aside (a malformed entry of a request sent again). */
  private async alertAsides(): Promise<void> {
    const asides = spoolShared(this.env.spool.dir).asides.splice(0);
    if (asides.length === 0) return;
    const { requestId, reason } = asides[0];
    await this.alerts.send('rejected', this.malformedAlert(requestId, reason, asides.length));
  }

  private malformedAlert(requestId: string, reason: string, count = 1): string {
    return this.texts.malformed(requestId, reason, count - 1, this.store.rejectedDir);
  }

  /** The alerts' words, in LANDING_LOCALE (app/i18n/). */
  private get texts() {
    return LANDING_MESSAGES[this.env.locale ?? DEFAULT_LOCALE].spoolAlerts;
  }

  private async drop(file: SpoolFile, now: number): Promise<void> {
    const entry = await this.store.read(file.name).catch(() => null);
    await this.store.remove(file.name);
    spoolShared(this.env.spool.dir).dropped += 1;
    const days = this.env.spool.maxAgeMs / 86_400_000;
    console.error(
      `[spool] ${file.requestId} dropped: older than LANDING_SPOOL_MAX_AGE_DAYS=${days} ` +
        `(age ${duration(now - file.submittedMs)}, route ${entry?.route ?? 'unknown'}, ${entry?.attempts ?? '?'} failed replays)`,
    );
    await this.store.noteDepth(now);
  }

  private async alertStale(waiting: SpoolFile[], now: number): Promise<void> {
    const oldest = waiting[0];
    const entry = await this.store.read(oldest.name).catch(() => null);
    await this.alerts.send(
      'stale',
      this.texts.stale(waiting.length, duration(now - oldest.submittedMs), oldest.requestId, entry?.last_error ?? null),
    );
  }

  /** A file that is not a usable entry: moved to `rejected/` with its reason, logged, alerted; never retried. */
  private async setAside(file: SpoolFile, reason: string, now: number): Promise<void> {
    await this.store.reject(file.name, reason, now);
    console.error(`[spool] ${file.requestId} malformed (${reason}): moved to ${this.store.rejectedDir}, not retried`);
    await this.alerts.send('rejected', this.malformedAlert(file.requestId, reason));
    await this.store.noteDepth(now);
  }

  private async replay(file: SpoolFile, entry: SpoolEntry): Promise<void> {
    const id = file.requestId;
    if (this.lock && !(await this.lock.owned())) {
      console.error(`[spool] the lock ${this.lock.path} is not this process's any more: replay stopped`);
      this.stopping.abort();
      return;
    }
    let status: number | undefined;
    let text = '';
    let retryAfter: string | null = null;
    let failure: string | undefined;
    try {
      const res = await fetch(this.env.leadsEndpoint, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', [SECRET_HEADER]: this.env.leadsSecret },
        body: JSON.stringify(lateBody(entry, this.env.telegram?.token ?? null)),
        signal: AbortSignal.any([AbortSignal.timeout(SERVER_TIMEOUT_MS), this.stopping.signal]),
      });
      status = res.status;
      retryAfter = res.headers.get('retry-after');
      text = (await res.text().catch(() => '')).slice(0, 1000);
    } catch (err) {
      if (this.stopping.signal.aborted) {
        console.log(`[spool] ${id} replay abandoned (stopping): the entry stays`);
        return;
      }
      failure = err instanceof Error && err.name === 'TimeoutError' ? 'timeout' : 'network';
    }
    const now = this.clock.now();

    if (status === 201 || status === 200) {
      this.serverBack = true;
      if (await this.store.remove(file.name, entry.revision)) {
        spoolShared(this.env.spool.dir).replayed += 1;
        console.log(
          `[spool] ${id} replayed → ${status} (attempt ${entry.attempts + 1}, ${duration(now - file.submittedMs)} after submission)`,
        );
        await this.store.noteDepth(now);
      } else {
        // Sent again by the visitor while this replay was on its way: the newer version goes too (the server
        // answers 200 for a request_id it has).
        await this.store.update(file.name, (e) => ({ ...e, next_attempt_at: iso(now), updated_at: iso(now) }));
        console.log(`[spool] ${id} replayed → ${status}; submitted again meanwhile: the newer version is replayed too`);
      }
      return;
    }

    if (status === 422) {
      this.serverBack = true;
      const codes = fieldCodes(text);
      await this.store.reject(file.name, `422: ${codes}`, now);
      console.error(`[spool] ${id} REJECTED by the server on replay (422: ${codes}): moved to ${this.store.rejectedDir}, not retried`);
      await this.alerts.send('rejected', this.texts.rejected(codes, id, this.store.rejectedDir));
      await this.store.noteDepth(now);
      return;
    }

    // Anything but an entry taken or refused: the server is not back (a 429 holds every replay anyway).
    this.serverBack = false;
    if (status === 429) {
      const wait = retryAfterMs(retryAfter, now);
      this.pausedUntil = now + wait;
      const why = `429${rateLimitWhy(text)}`;
      await this.store.update(file.name, (e) => ({ ...e, next_attempt_at: iso(this.pausedUntil), last_error: why, updated_at: iso(now) }));
      console.warn(`[spool] ${id} replay → ${why}: every replay waits ${duration(wait)} (Retry-After)`);
      return;
    }

    failure ??= String(status);
    const updated = await this.store.update(file.name, (e) => {
      const attempts = e.attempts + 1;
      return { ...e, attempts, next_attempt_at: iso(now + backoffMs(attempts)), last_error: failure, updated_at: iso(now) };
    });
    if (updated) {
      console.warn(
        `[spool] ${id} replay failed (${failure}), attempt ${updated.attempts}; next in ${duration(backoffMs(updated.attempts))}`,
      );
    }
  }

  /** Runs the loop until `stop()`. */
  start(): void {
    if (this.running) return;
    const shared = spoolShared(this.env.spool.dir);
    shared.wake = () => {
      this.woken = true;
      this.nap?.abort();
    };
    if (this.lock) {
      const lock = this.lock;
      this.lockCheckTimer = setInterval(() => {
        void lock.owned().then((ours) => {
          if (ours || this.stopping.signal.aborted) return;
          console.error(`[spool] the lock ${lock.path} is not this process's any more: replay stopped`);
          this.stopping.abort();
          this.nap?.abort();
        });
      }, LOCK_CHECK_MS);
      this.lockCheckTimer.unref();
    }
    this.running = (async () => {
      await this.store.sweepTemporary(this.clock.now()).catch(() => undefined);
      while (!this.stopping.signal.aborted) {
        let wait: number;
        try {
          wait = await this.step();
        } catch (err) {
          console.error(`[spool] replay pass failed: ${errorText(err)}`);
          wait = 5_000;
        }
        if (this.stopping.signal.aborted) break;
        if (this.woken) {
          this.woken = false;
          continue;
        }
        if (wait <= 0) continue;
        this.nap = new AbortController();
        await this.clock.sleep(wait, AbortSignal.any([this.nap.signal, this.stopping.signal]));
        this.nap = null;
        this.woken = false;
      }
    })();
  }

  /** Stops the loop: an in-flight replay is abandoned (its entry stays); the lock is released. */
  async stop(): Promise<void> {
    this.stopping.abort();
    this.nap?.abort();
    if (this.lockCheckTimer) clearInterval(this.lockCheckTimer);
    await this.running;
    const shared = spoolShared(this.env.spool.dir);
    shared.wake = null;
    await this.lock?.release();
  }
}

export type SpoolStart = { ok: true; stop: () => Promise<void> } | { ok: false; problem: string };

/**
 * Called once by `server.mjs` when the landing starts (production and development): takes the spool's lock and
 * starts the replay. Not ok (the landing must not start) when another live landing holds the lock.
 */
export async function startSpoolReplay(): Promise<SpoolStart> {
  const env = getEnv();
  if (!env.spool || !env.leadsEndpoint || !env.leadsSecret) {
    console.log('[spool] off: no LEADS_ENDPOINT, nothing to replay to');
    return { ok: true, stop: () => Promise.resolve() };
  }
  const { dir } = env.spool;
  let locked: Awaited<ReturnType<typeof acquireSpoolLock>>;
  try {
    locked = await acquireSpoolLock(dir);
  } catch (err) {
    const why = err instanceof Error ? `${(err as NodeJS.ErrnoException).code ?? ''} ${err.message}`.trim() : String(err);
    return { ok: false, problem: `LANDING_SPOOL_DIR ${dir}: its lock (${dir}/.lock) cannot be taken: ${why}` };
  }
  if (!locked.ok) return { ok: false, problem: lockRefusal(dir, locked.holder) };
  if (locked.tookOver) {
    const who = Number.isInteger(locked.tookOver.pid) ? `pid ${locked.tookOver.pid}` : 'an unknown process';
    console.log(`[spool] took over the lock of ${who} (not running any more)`);
  }
  const replayer = new SpoolReplayer({
    env: {
      spool: env.spool,
      leadsEndpoint: env.leadsEndpoint,
      leadsSecret: env.leadsSecret,
      telegram: env.telegram,
      adminChatId: env.adminChatId,
      locale: env.locale,
    },
    lock: locked.lock,
  });
  const stats = await replayer.store.stats(Date.now());
  spoolShared(dir).lastDepth = stats.depth;
  const strays = await replayer.store.strays();
  console.log(
    `[spool] replay started: ${dir}, ${stats.depth} waiting` +
      `${stats.depth ? ` (oldest ${duration(stats.oldestAgeSeconds * 1000)})` : ''}, ${stats.rejected} in rejected/` +
      `${strays.length ? `, ${strays.length} unknown files left alone` : ''}`,
  );
  replayer.start();
  // However the process ends (a signal handler's exit, Vite's own SIGTERM handler in development), the lock goes with it.
  const releaseOnExit = () => locked.lock.releaseSync();
  process.once('exit', releaseOnExit);
  return {
    ok: true,
    stop: async () => {
      await replayer.stop();
      process.off('exit', releaseOnExit);
    },
  };
}

/** `GET /metrics` on the landing. */
export function spoolMetrics(): Promise<string> {
  return spoolMetricsText(getEnv());
}
