import { Inject, Injectable, Logger } from '@nestjs/common';
import { errorText } from '@stickers/shared';
import { Clock } from '../clock/clock';
import { SERVER_CONFIG } from '../config/config.module';
import type { ServerConfig } from '../config/config';
import { isStorageError, WriteHealth, type WriteFailure } from '../database/write-health';
import { DatabaseMaintenanceRepository } from '../repositories/database-maintenance.repository';
import { LeadsRepository } from '../repositories/leads.repository';
import { SettingsRepository } from '../repositories/settings.repository';
import { TelegramGateway } from '../telegram/telegram.gateway';

interface Check {
  ok: boolean;
  detail: string;
}
type OutboxCheck = Check & { oldest_unpublished_age_sec: number | null; last_card_age_sec: number | null };
interface Readiness {
  ready: boolean;
  checks: { database: Check; migrations: Check; outbox: OutboxCheck; telegram: Check };
}
type CheckName = keyof Readiness['checks'];

/** A check as computed: `reason` (paths, error texts) goes to the log only, never to the public answer. */
interface Outcome<C extends Check = Check> {
  check: C;
  reason?: string;
}

/** `/ready` is public and polled hard: one answer serves every call for this long (the probe write is fsync'd). */
export const READY_CACHE_MS = 1000;
const TELEGRAM_CACHE_MS = 30_000;
/** Several pages (4 KiB): the probe must allocate pages as a new lead does. */
const GROWTH_PROBE_BYTES = 32 * 1024;

/** `GET /ready`: the database is ours and takes a write, migrations are current, the outbox is not stuck; Telegram is reported only. */
@Injectable()
export class ReadinessService {
  private readonly logger = new Logger('Readiness');
  private telegramCache: { at: number; outcome: Outcome } | null = null;
  private cached: { at: number; readiness: Readiness } | null = null;
  private inflight: Promise<Readiness> | null = null;
  private readonly logged = new Map<CheckName, string>();

  constructor(
    @Inject(SERVER_CONFIG) private readonly config: ServerConfig,
    private readonly database: DatabaseMaintenanceRepository,
    private readonly telegram: TelegramGateway,
    private readonly leads: LeadsRepository,
    private readonly writeHealth: WriteHealth,
    private readonly settings: SettingsRepository,
    private readonly clock: Clock,
  ) {}

  async check(): Promise<Readiness> {
    const now = this.clock.now();
    if (this.cached && now >= this.cached.at && now - this.cached.at < READY_CACHE_MS) return this.cached.readiness;
    // Calls that arrive while a check runs share it.
    this.inflight ??= this.compute(now).finally(() => {
      this.inflight = null;
    });
    return this.inflight;
  }

  private async compute(now: number): Promise<Readiness> {
    const { outcome: database, readable } = await this.checkDatabase();
    const unavailable = { ok: false, detail: 'database unavailable' };
    const outboxUnavailable = { ...unavailable, oldest_unpublished_age_sec: null, last_card_age_sec: null };
    // A database that went away between the probe and these reads (PostgreSQL restarting) is unavailable, not a 500.
    const migrations: Outcome = readable ? await this.checkMigrations().catch(unreadable(unavailable)) : { check: unavailable };
    const outbox: Outcome<OutboxCheck> = readable
      ? await this.checkOutbox().catch(unreadable(outboxUnavailable))
      : { check: outboxUnavailable };
    const telegram = await this.checkTelegram();
    const outcomes = { database, migrations, outbox, telegram };
    for (const [name, outcome] of Object.entries(outcomes) as [CheckName, Outcome][]) this.logChange(name, outcome);
    const readiness: Readiness = {
      ready: database.check.ok && migrations.check.ok && outbox.check.ok,
      checks: { database: database.check, migrations: migrations.check, outbox: outbox.check, telegram: telegram.check },
    };
    this.cached = { at: now, readiness };
    return readiness;
  }

  /** Logs a check's state (with its reason) when it changes; a first "ok" is not news. */
  private logChange(name: CheckName, { check, reason }: Outcome): void {
    const state = `${check.ok}|${check.ok ? '' : check.detail}`;
    const previous = this.logged.get(name);
    this.logged.set(name, state);
    if (state === previous || (previous === undefined && check.ok)) return;
    if (check.ok) this.logger.log({ msg: `readiness check ${name} ok again`, check: name, detail: check.detail });
    else this.logger.warn({ msg: `readiness check ${name} failing`, check: name, detail: check.detail, reason: reason ?? check.detail });
  }

  /** `readable`: the file is still ours, so the other checks can read it even if writes fail. */
  private async checkDatabase(): Promise<{ outcome: Outcome; readable: boolean }> {
    const { path } = this.database;
    const failed = (detail: string, reason?: string, readable = true) => ({ outcome: { check: { ok: false, detail }, reason }, readable });
    if (this.database.isClosed) return failed('database is closed', undefined, false);
    if (!this.database.fileIsCurrent())
      return failed('database file is gone or was replaced', `database file ${path} is gone or was replaced`, false);
    try {
      await this.settings.probeWrite(this.clock.now());
    } catch (err) {
      return failed('write failed', `probe write to ${path} failed: ${errorText(err)}`);
    }
    // A full disk still takes the probe's tiny upsert while every new lead fails: what the submit path and outbox saw counts.
    const submit = await this.submitFailure();
    if (submit) return failed('storage error on the submit path', `the last write on the submit path ${failedWith(submit)}`);
    const outbox = this.writeHealth.failing('outbox');
    if (outbox && isStorageError(outbox)) return failed('storage error in the outbox', `the last outbox pass ${failedWith(outbox)}`);
    return { outcome: { check: { ok: true, detail: 'writable' } }, readable: true };
  }

  /** The submit path's storage failure: no lead comes to clear it, so a write that grows the file says whether there is room. */
  private async submitFailure(): Promise<WriteFailure | null> {
    const failure = this.writeHealth.failing('submit');
    if (!failure || !isStorageError(failure)) return null;
    try {
      await this.settings.probeGrowth(GROWTH_PROBE_BYTES, this.clock.now());
    } catch {
      return failure;
    }
    this.writeHealth.recordSuccess('submit');
    return null;
  }

  private async checkMigrations(): Promise<Outcome> {
    const current = await this.database.migrationsCurrent();
    return { check: current ? { ok: true, detail: 'current' } : { ok: false, detail: 'pending migrations' } };
  }

  private async checkOutbox(): Promise<Outcome<OutboxCheck>> {
    const now = this.clock.now();
    const ageSec = (t: number | null) => (t === null ? null : Math.floor((now - t) / 1000));
    const oldest = ageSec(await this.leads.oldestUnpublishedAt());
    const lastCard = ageSec(await this.leads.lastPublishedAt());
    const max = this.config.readyMaxOutboxAgeSec;
    const ages = { oldest_unpublished_age_sec: oldest, last_card_age_sec: lastCard };
    if (oldest === null) return { check: { ok: true, detail: 'nothing waiting', ...ages } };
    const progressing = lastCard !== null && lastCard <= max;
    if (oldest > max && !progressing) {
      return { check: { ok: false, detail: `outbox stuck: a lead has waited over ${max} s and no card went out in that time`, ...ages } };
    }
    const detail = oldest > max ? `oldest unpublished lead ${oldest} s old; cards still go out` : `oldest unpublished lead ${oldest} s old`;
    return { check: { ok: true, detail, ...ages } };
  }

  private async checkTelegram(): Promise<Outcome> {
    if (!this.telegram.available) return { check: { ok: false, detail: 'no TELEGRAM_BOT_TOKEN: publishing paused' } };
    const now = Date.now();
    if (this.telegramCache && now - this.telegramCache.at < TELEGRAM_CACHE_MS) return this.telegramCache.outcome;
    const me = await this.telegram.call('getMe', {});
    // Telegram's own words stay in the log; a token it does not know (401, or 404 for one of a wrong form) is said.
    const refused = !me.ok && me.kind === 'refused' && /\b(401|404)\b|Unauthorized|Not Found/.test(me.description);
    const outcome: Outcome = me.ok
      ? { check: { ok: true, detail: `reachable as @${me.value.username ?? '?'}` } }
      : {
          check: { ok: false, detail: refused ? 'token refused: check TELEGRAM_BOT_TOKEN' : 'unreachable' },
          reason: `getMe failed: ${me.description}`,
        };
    this.telegramCache = { at: now, outcome };
    return outcome;
  }
}

const failedWith = (f: WriteFailure) => `failed with ${f.code} at ${new Date(f.at).toISOString()}`;

/** A check that could not read the database: `check` with the reason, when the error is a storage error; else rethrown. */
function unreadable<C extends Check>(check: C): (err: unknown) => Outcome<C> {
  return (err: unknown) => {
    if (!isStorageError(err)) throw err;
    return { check, reason: `database unavailable: ${errorText(err)}` };
  };
}
