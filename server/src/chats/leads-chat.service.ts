import { Inject, Injectable, Logger } from '@nestjs/common';
import { AlertsService } from '../alerts/alerts.service';
import { Clock } from '../clock/clock';
import { SERVER_CONFIG } from '../config/config.module';
import type { ServerConfig } from '../config/config';
import { LeadsRepository } from '../repositories/leads.repository';
import { SettingsRepository } from '../repositories/settings.repository';

export const LEADS_CHAT_SETTING = 'leads_chat_id';

/**
 * Which chat is the leads group (docs/requirements.md §4.1): the one learnt from a group migration (§4.5), kept in
 * settings so it survives restarts, else LEADS_CHAT_ID. The outbox publishes there; the bot's button and command
 * checks ask here too, so both always agree on the group.
 */
@Injectable()
export class LeadsChatService {
  // Migrations are learnt from the outbox's sends: ops read of them among the outbox's lines.
  private readonly logger = new Logger('Outbox');
  /** The chat id learnt from a migration, read once; undefined until then. */
  private migratedChatId: string | null | undefined;

  constructor(
    @Inject(SERVER_CONFIG) private readonly config: ServerConfig,
    private readonly settings: SettingsRepository,
    private readonly leads: LeadsRepository,
    private readonly alerts: AlertsService,
    private readonly clock: Clock,
  ) {}

  async leadsChatId(): Promise<string | null> {
    if (this.migratedChatId === undefined) this.migratedChatId = await this.settings.get(LEADS_CHAT_SETTING);
    return this.migratedChatId ?? this.config.telegram.leadsChatId;
  }

  /** §4.5: the new id wins from now on, restarts included; cards already sent are re-addressed; ops are asked to update. */
  async migrated(from: string, to: string): Promise<void> {
    await this.settings.set(LEADS_CHAT_SETTING, to, this.clock.now());
    this.migratedChatId = to;
    await this.leads.moveChat(from, to);
    this.logger.warn({ msg: 'leads group migrated; publishing there from now on', from_chat: from, to_chat: to });
    void this.alerts.sendThrottled(
      `chat_migrated:${to}`,
      0,
      `ℹ️ Группа заявок стала супергруппой: новый id ${to} (был ${from}). Карточки идут туда; обновите LEADS_CHAT_ID.`,
    );
  }
}
