import { existsSync, statSync } from 'node:fs';
import { Inject, Injectable } from '@nestjs/common';
import { Clock } from '../clock/clock';
import { SERVER_CONFIG } from '../config/config.module';
import type { ServerConfig } from '../config/config';
import { DatabaseHandle } from '../database/database.module';
import { migrationsCurrent } from '../database/database';
import { OutboxRepository } from '../outbox/outbox.repository';
import { TelegramGateway } from '../telegram/telegram.gateway';

export interface Check {
  ok: boolean;
  detail: string;
}
export interface Readiness {
  ready: boolean;
  checks: { database: Check; migrations: Check; outbox: Check & { oldest_unpublished_age_sec: number | null }; telegram: Check };
}

const TELEGRAM_CACHE_MS = 30_000;

/**
 * `GET /ready`: the database is the file we opened and takes a write, migrations are current, and the outbox is not
 * stuck (oldest unpublished lead younger than READY_MAX_OUTBOX_AGE_SEC). Telegram is reported but does not make the
 * server unready: leads are still stored while Telegram is down, and that is the point of the outbox.
 */
@Injectable()
export class ReadinessService {
  private telegramCache: { at: number; check: Check } | null = null;

  constructor(
    @Inject(SERVER_CONFIG) private readonly config: ServerConfig,
    private readonly database: DatabaseHandle,
    private readonly telegram: TelegramGateway,
    private readonly outbox: OutboxRepository,
    private readonly clock: Clock,
  ) {}

  async check(): Promise<Readiness> {
    const database = await this.checkDatabase();
    const migrations = database.ok ? await this.checkMigrations() : { ok: false, detail: 'database unavailable' };
    const outbox = database.ok ? await this.checkOutbox() : { ok: false, detail: 'database unavailable', oldest_unpublished_age_sec: null };
    const telegram = await this.checkTelegram();
    return { ready: database.ok && migrations.ok && outbox.ok, checks: { database, migrations, outbox, telegram } };
  }

  private async checkDatabase(): Promise<Check> {
    const { path, inode } = this.database;
    if (this.database.isClosed) return { ok: false, detail: 'database is closed' };
    if (inode !== null && (!existsSync(path) || statSync(path).ino !== inode)) return { ok: false, detail: `database file ${path} is gone or was replaced` };
    try {
      await this.database.db
        .insertInto('settings')
        .values({ key: 'ready_probe', value: 'ok', updated_at: this.clock.now() })
        .onConflict((oc) => oc.column('key').doUpdateSet({ updated_at: this.clock.now() }))
        .execute();
      return { ok: true, detail: 'writable' };
    } catch (err) {
      return { ok: false, detail: `write failed: ${err instanceof Error ? err.message : String(err)}` };
    }
  }

  private async checkMigrations(): Promise<Check> {
    return (await migrationsCurrent(this.database.db)) ? { ok: true, detail: 'current' } : { ok: false, detail: 'pending migrations' };
  }

  private async checkOutbox(): Promise<Check & { oldest_unpublished_age_sec: number | null }> {
    const oldest = await this.outbox.oldestUnpublishedAt();
    const age = oldest === null ? null : Math.floor((this.clock.now() - oldest) / 1000);
    const max = this.config.readyMaxOutboxAgeSec;
    if (age !== null && age > max) return { ok: false, detail: `outbox stuck: oldest unpublished lead is ${age} s old (limit ${max} s)`, oldest_unpublished_age_sec: age };
    return { ok: true, detail: age === null ? 'nothing waiting' : `oldest unpublished lead ${age} s old`, oldest_unpublished_age_sec: age };
  }

  private async checkTelegram(): Promise<Check> {
    if (!this.telegram.available) return { ok: false, detail: 'no TELEGRAM_BOT_TOKEN: publishing paused' };
    const now = Date.now();
    if (this.telegramCache && now - this.telegramCache.at < TELEGRAM_CACHE_MS) return this.telegramCache.check;
    const me = await this.telegram.getMe();
    const check = me.ok ? { ok: true, detail: `reachable as @${me.value.username ?? '?'}` } : { ok: false, detail: `unreachable: ${me.description}` };
    this.telegramCache = { at: now, check };
    return check;
  }
}
