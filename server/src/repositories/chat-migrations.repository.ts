import { Injectable } from '@nestjs/common';
import { SettingsRepository } from './settings.repository';

/** A configured chat: the leads group (LEADS_CHAT_ID), a routed one (LEADS_ROUTES), the admin chat (ADMIN_CHAT_ID). */
export type ConfiguredChat = 'leads' | 'route' | 'admin';

const settingKey = (kind: ConfiguredChat, configured: string) => `${kind}_chat_id:${configured}`;

/**
 * Where a configured chat went when Telegram migrated it (a group that became a supergroup, §4.5), kept across restarts
 * in settings under `<kind>_chat_id:<id as configured>`: pointing the variable at another chat later wins. Read once per
 * process.
 */
@Injectable()
export class ChatMigrationsRepository {
  private readonly known = new Map<string, string | null>();

  constructor(private readonly settings: SettingsRepository) {}

  /** The id `configured` migrated to, else `configured` itself. */
  async current(kind: ConfiguredChat, configured: string, at: number): Promise<string> {
    const key = settingKey(kind, configured);
    if (!this.known.has(key)) {
      // An earlier version kept the leads group's unkeyed: taken as the migration of LEADS_CHAT_ID as configured now.
      this.known.set(key, kind === 'leads' ? await this.settings.rekey('leads_chat_id', key, at) : await this.settings.get(key));
    }
    return this.known.get(key) ?? configured;
  }

  /** As `current` from what this process has read so far, with no query. */
  peek(kind: ConfiguredChat, configured: string): string {
    return this.known.get(settingKey(kind, configured)) ?? configured;
  }

  /** `configured` is `to` from now on: in this process at once, then in the database (which may refuse the write). */
  async remember(kind: ConfiguredChat, configured: string, to: string, at: number): Promise<void> {
    this.known.set(settingKey(kind, configured), to);
    await this.settings.set(settingKey(kind, configured), to, at);
  }
}
