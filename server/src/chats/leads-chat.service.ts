import { Inject, Injectable, Logger } from '@nestjs/common';
import { AlertsService } from '../alerts/alerts.service';
import { Clock } from '../clock/clock';
import { SERVER_CONFIG } from '../config/config.module';
import type { LeadsRoute, ServerConfig } from '../config/config';
import { ChatMigrationsRepository } from '../repositories/chat-migrations.repository';
import { LeadsRepository } from '../repositories/leads.repository';
import { MESSAGES } from '../i18n/i18n.module';
import type { Messages } from '../i18n';

/** At most one alert per topic in this time: a closed topic must not flood the admin chat. */
const TOPIC_ALERT_INTERVAL_MS = 30 * 60 * 1000;

/** Where a card goes: a chat, the forum topic in it (null: none), and the route that chose them. */
export interface CardTarget {
  chatId: string;
  threadId: number | null;
  /** The source of the LEADS_ROUTES entry; null: LEADS_CHAT_ID / LEADS_THREAD_ID. */
  route: string | null;
}

/** The leads groups (§4.1, §14.9): LEADS_CHAT_ID unless LEADS_ROUTES names the source, each as a migration left it (§4.5). */
@Injectable()
export class LeadsChatService {
  // Migrations are learnt from the outbox's sends: logged among its lines.
  private readonly logger = new Logger('Outbox');

  constructor(
    @Inject(SERVER_CONFIG) private readonly config: ServerConfig,
    private readonly migrations: ChatMigrationsRepository,
    private readonly leads: LeadsRepository,
    private readonly alerts: AlertsService,
    private readonly clock: Clock,
    @Inject(MESSAGES) private readonly t: Messages,
  ) {}

  async leadsChatId(): Promise<string | null> {
    const configured = this.config.telegram.leadsChatId;
    return configured === null ? null : this.currentChat(configured);
  }

  /** Its source's route (names compared without case), else LEADS_CHAT_ID and LEADS_THREAD_ID; null without a chat. */
  async cardTarget(lead: { source_landing: string | null }): Promise<CardTarget | null> {
    const source = lead.source_landing?.toLowerCase();
    const route = source ? this.config.telegram.routes.find((r) => r.source.toLowerCase() === source) : undefined;
    if (route) return { chatId: await this.currentChat(route.chatId), threadId: route.threadId, route: route.source };
    const chatId = await this.leadsChatId();
    return chatId === null ? null : { chatId, threadId: this.config.telegram.leadsThreadId, route: null };
  }

  async leadsChats(): Promise<string[]> {
    const chats = new Set<string>();
    const main = await this.leadsChatId();
    if (main !== null) chats.add(main);
    for (const route of this.config.telegram.routes) chats.add(await this.currentChat(route.chatId));
    return [...chats];
  }

  async isLeadsChat(chatId: string): Promise<boolean> {
    return (await this.leadsChats()).includes(chatId);
  }

  /** The id a migration gave a configured chat, if any. */
  private currentChat(configured: string): Promise<string> {
    return this.migrations.current(this.kind(configured), configured, this.clock.now());
  }

  private kind(configured: string): 'leads' | 'route' {
    return configured === this.config.telegram.leadsChatId ? 'leads' : 'route';
  }

  /** §4.5: the new id wins from now on, for the default chat and every route in it; ops are asked to update the variable. */
  async migrated(from: string, to: string): Promise<void> {
    const configured = this.config.telegram.leadsChatId;
    const wasDefault = from === (await this.leadsChatId());
    const routes: LeadsRoute[] = [];
    for (const route of this.config.telegram.routes) {
      if (route.chatId !== configured && (await this.currentChat(route.chatId)) === from) routes.push(route);
    }
    // The cards first: a migration not kept (a database error) is learnt again from Telegram's next answer.
    await this.leads.moveChat(from, to);
    for (const chat of new Set([...(wasDefault ? [configured!] : []), ...routes.map((r) => r.chatId)])) {
      await this.migrations.remember(this.kind(chat), chat, to, this.clock.now());
    }
    const sources = routes.map((r) => r.source);
    this.logger.warn({
      msg: 'leads group migrated; publishing there from now on',
      from_chat: from,
      to_chat: to,
      ...(sources.length > 0 ? { routes: sources } : {}),
    });
    const variable = [wasDefault ? 'LEADS_CHAT_ID' : null, sources.length > 0 ? `LEADS_ROUTES (${sources.join(', ')})` : null]
      .filter(Boolean)
      .join(this.t.alerts.and);
    // A chat no variable names any more (cards of an earlier configuration): only its cards are re-addressed.
    const text = variable ? this.t.alerts.chatMigrated(from, to, variable) : this.t.alerts.otherChatMigrated(from, to);
    void this.alerts.sendThrottled(`chat_migrated:${to}`, 0, text);
  }

  /** Telegram refused a topic of a leads chat: the message went into General. Ops hear of it with the topic's variable. */
  topicGone(chatId: string, threadId: number | null, description: string, what: string): void {
    const inChat = (r: LeadsRoute) => r.chatId === chatId || this.migrations.peek(this.kind(r.chatId), r.chatId) === chatId;
    const route = this.config.telegram.routes.find((r) => r.threadId === threadId && inChat(r));
    // A reply without a topic of its own was refused in the topic of the message it replies to.
    const variable = route ? `LEADS_ROUTES (${route.source})` : threadId !== null ? 'LEADS_THREAD_ID' : null;
    this.logger.warn({
      msg: 'forum topic refused; sent to the chat without a topic',
      chat_id: chatId,
      thread_id: threadId,
      what,
      error: description,
    });
    void this.alerts.sendThrottled(
      `topic_gone:${chatId}:${threadId ?? 'card'}`,
      TOPIC_ALERT_INTERVAL_MS,
      this.t.alerts.topicGone(threadId, chatId, description, what, variable),
    );
  }
}
