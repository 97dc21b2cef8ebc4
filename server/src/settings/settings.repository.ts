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
}
