import { Injectable } from '@nestjs/common';
import { InjectDb } from '../database/database.module';
import type { LeadsDb } from '../database/database';

/** Small persisted facts the app learns while running (the leads chat id after a group migration). */
@Injectable()
export class SettingsRepository {
  constructor(@InjectDb() private readonly db: LeadsDb) {}

  async get(key: string): Promise<string | null> {
    const row = await this.db.selectFrom('settings').select('value').where('key', '=', key).executeTakeFirst();
    return row?.value ?? null;
  }

  async set(key: string, value: string, at: number): Promise<void> {
    await this.db
      .insertInto('settings')
      .values({ key, value, updated_at: at })
      .onConflict((oc) => oc.column('key').doUpdateSet({ value, updated_at: at }))
      .execute();
  }

  /** Readiness: a tiny committed upsert (the file takes a write at all). */
  async probeWrite(at: number): Promise<void> {
    await this.set('ready_probe', 'ok', at);
  }

  /**
   * Readiness, while the submit path last failed on storage: a committed write that needs new pages (a value about
   * the size of a lead, inserted and deleted in one transaction), so a full disk fails it as it fails a new lead.
   */
  async probeGrowth(bytes: number, at: number): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await trx
        .insertInto('settings')
        .values({ key: 'ready_growth_probe', value: 'x'.repeat(bytes), updated_at: at })
        .onConflict((oc) => oc.column('key').doUpdateSet({ value: 'x'.repeat(bytes), updated_at: at }))
        .execute();
      await trx.deleteFrom('settings').where('key', '=', 'ready_growth_probe').execute();
    });
  }
}
