import { Inject, Injectable, Logger } from '@nestjs/common';
import { AnonymisationService } from '../anonymisation/anonymisation.service';
import { LeadsChatService } from '../chats/leads-chat.service';
import { SERVER_CONFIG } from '../config/config.module';
import type { ServerConfig } from '../config/config';
import { parseContact, parsePhoneContact } from '../anonymisation/contact';
import { ExportService } from '../export/export.service';
import { ReportsService } from '../reports/reports.service';
import { TelegramGateway, type BotReply } from '../telegram/telegram.gateway';
import { MESSAGES } from '../i18n/i18n.module';
import { catalogueOf, type Messages } from '../i18n';
import { BOT_COMMAND_NAMES, EXPORT_DAYS_DEFAULT, EXPORT_DAYS_MAX, INBOX_START, type BotCommand } from '../domain/bot-commands';
import { leadNumberOf } from '../domain/lead';
import { AlertsService } from '../alerts/alerts.service';

/** Lead numbers an erasure's answer lists (then "…and N more"): far below Telegram's 4096 characters. */
const FORGET_LISTED = 30;
/** The inbox's button beside the message field of one private chat (a manager's, or one that asked with /stickers_inbox). */
export function inboxMenuButton(t: Messages, url: string) {
  return { type: 'web_app' as const, text: t.inbox.menuButton, web_app: { url } };
}

/** The menu setMyCommands sets, in the locale's words. */
export function botCommands(t: Messages): { command: BotCommand; description: string }[] {
  return BOT_COMMAND_NAMES.map((command) => ({ command, description: t.commands.menu[command] }));
}

/** MANAGER_IDS leaves the user out, they do not administer the leads group, or Telegram could not tell. */
type PermissionRefusal = 'not_manager' | 'not_admin' | 'admin_unknown' | 'anonymous_admin';

/** Who Telegram says sent a message of a group's anonymous administrator (the group itself is its `sender_chat`). */
const ANONYMOUS_ADMIN_ID = 1087968824;

/** A command the bot will not carry out, as a value: `decide` returns these, `refusalText` words them. */
export type CommandRefusal =
  | { kind: 'refused'; reason: 'wrong_chat' | 'not_admin_chat' | 'private_chat' | 'inbox_not_configured' }
  | { kind: 'refused'; reason: PermissionRefusal | 'bad_arguments'; action: 'forget' | 'export' };

/** The one place a refusal becomes the text the user reads, in the catalogue's words. */
export function refusalText(refusal: CommandRefusal, t: Messages): string {
  const c = t.commands;
  const exporting = 'action' in refusal && refusal.action === 'export';
  const texts: Record<CommandRefusal['reason'], string> = {
    wrong_chat: c.wrongChat,
    not_admin_chat: c.exportWrongChat,
    not_manager: exporting ? c.exportNotManager : c.notManager,
    not_admin: exporting ? c.exportNotAdmin : c.notAdmin,
    admin_unknown: c.adminUnknown,
    anonymous_admin: c.anonymousAdmin,
    bad_arguments: exporting ? c.exportUsage : c.forgetUsage,
    private_chat: c.chatIdPrivate,
    inbox_not_configured: t.inbox.notConfigured,
  };
  return texts[refusal.reason];
}

/** `/help` answers in every chat but is not in the menu: a group's other bots answer `/help` too. */
export const HELP_COMMAND = 'help';
export type AnsweredCommand = BotCommand | typeof HELP_COMMAND;

interface CommandCall {
  command: AnsweredCommand;
  chatId: string;
  /** The forum topic the command was sent in (null: none); the answer and the export's file go there. */
  threadId: number | null;
  userId: number;
  /** The text after the command. */
  args: string;
  chatType?: string;
  /** The sender's Telegram app language (`language_code`): a visitor's private chat answers in it where the bot has it. */
  language?: string;
}

/** A text (with buttons) to answer with, or a refusal that `refusalText` words. */
type CommandOutcome = string | BotReply | CommandRefusal;

/** Decides what each command answers. */
@Injectable()
export class BotCommandsService {
  private readonly logger = new Logger('Bot');

  constructor(
    @Inject(SERVER_CONFIG) private readonly config: ServerConfig,
    @Inject(MESSAGES) private readonly t: Messages,
    private readonly reports: ReportsService,
    private readonly anonymisation: AnonymisationService,
    private readonly chats: LeadsChatService,
    private readonly telegram: TelegramGateway,
    private readonly exports: ExportService,
    private readonly alerts: AlertsService,
  ) {}

  async run(call: CommandCall): Promise<BotReply> {
    const outcome = await this.decide(call);
    if (typeof outcome === 'string') return { text: outcome };
    return 'kind' in outcome ? { text: refusalText(outcome, this.t) } : outcome;
  }

  private async decide(call: CommandCall): Promise<CommandOutcome> {
    if (call.command === HELP_COMMAND) return this.help(call);
    // Setup's helper answers in any group: it is how a chat's id is found before it is configured.
    if (call.command === 'stickers_chatid') return this.chatIds(call);
    // The inbox checks who opens it: its address may be given in the private chat with the bot too.
    if (call.command === 'stickers_inbox' && call.chatType === 'private') return this.inbox(call);
    // The admin chat as a migration left it (a group that became a supergroup), as alerts follow it.
    const allowed = [...(await this.chats.leadsChats()), await this.alerts.adminChatId()].filter((c): c is string => c !== null);
    if (!allowed.includes(call.chatId)) return { kind: 'refused', reason: 'wrong_chat' };
    switch (call.command) {
      case 'stickers_new':
        return this.reports.newLeads();
      case 'stickers_stats':
        return this.reports.stats();
      case 'stickers_forget':
        return this.forget(call);
      case 'stickers_export':
        return this.export(call);
      case 'stickers_inbox':
        return this.inbox(call);
    }
  }

  /**
   * What the bot can do is no secret: in a group a title, then `/<command> — <description>` in the menu's order. The
   * private chat is where visitors write to the team: there, what the chat is for, and the inbox's command to a manager.
   */
  private help(call: CommandCall): string {
    const line = (c: { command: BotCommand; description: string }) => `/${c.command} — ${c.description}`;
    if (call.chatType !== 'private') return [this.t.commands.helpTitle, ...botCommands(this.t).map(line)].join('\n');
    // The private chat in the sender's Telegram app language where the bot has it.
    const t = catalogueOf(call.language, this.t);
    const manager = this.config.inbox.url && this.config.telegram.managerIds?.includes(call.userId);
    return [
      t.conversation.help,
      ...botCommands(t)
        .filter((c) => manager && c.command === 'stickers_inbox')
        .map(line),
    ].join('\n');
  }

  /**
   * LEADS_INBOX_URL as a `web_app` button in the private chat (the Mini App); in a group (no `web_app` there) a `url`
   * button to that private chat. A private chat that asks gets the inbox as its menu button too; the private chats' default stays Telegram's,
   * since visitors write to the bot there.
   */
  private async inbox(call: CommandCall): Promise<CommandOutcome> {
    const url = this.config.inbox.url;
    if (!url) return { kind: 'refused', reason: 'inbox_not_configured' };
    const text = this.t.inbox.button;
    if (call.chatType !== 'private') {
      // The button opens the private chat with `/start inbox`, which answers as below; the page itself if getMe fails.
      const me = await this.telegram.identity();
      const chat = me.ok ? `${this.config.leads.telegramLinkRoot}/${me.value.username}?start=${INBOX_START}` : url;
      return { text: this.t.inbox.group, keyboard: { inline_keyboard: [[{ text, url: chat }]] } };
    }
    const set = await this.telegram.call('setChatMenuButton', { chat_id: Number(call.chatId), menu_button: inboxMenuButton(this.t, url) });
    if (!set.ok) this.logger.warn({ msg: "the inbox's menu button not set", chat_id: call.chatId, error: set.description });
    return { text: this.t.inbox.private, keyboard: { inline_keyboard: [[{ text, web_app: { url } }]] } };
  }

  /** docs/requirements.md §16.2: the lines of .env for the chat and topic it was sent in. Ids only: nothing personal. */
  private chatIds(call: CommandCall): CommandOutcome {
    if (call.chatType === 'private') return { kind: 'refused', reason: 'private_chat' };
    const env = (chat: string) => [`${chat}_CHAT_ID=${call.chatId}`, ...(call.threadId ? [`${chat}_THREAD_ID=${call.threadId}`] : [])];
    return [this.t.commands.chatIdLeads, ...env('LEADS'), '', this.t.commands.chatIdAdmin, ...env('ADMIN')].join('\n');
  }

  /** The CSV of the last days as a document, in the admin chat only (it holds every contact), for managers. */
  private async export(call: CommandCall): Promise<CommandOutcome> {
    const { adminThreadId } = this.config.telegram;
    if (call.chatId !== (await this.alerts.adminChatId())) return { kind: 'refused', reason: 'not_admin_chat' };
    // The admin chat a topic of a leads group (ADMIN_THREAD_ID): the leads' own topics are not it.
    if (adminThreadId !== null && call.threadId !== adminThreadId && (await this.chats.isLeadsChat(call.chatId)))
      return { kind: 'refused', reason: 'not_admin_chat' };
    const refusal = await this.mayEraseOrExport(call.userId);
    if (refusal) return { kind: 'refused', reason: refusal, action: 'export' };
    const arg = call.args.trim();
    const days = arg === '' ? EXPORT_DAYS_DEFAULT : /^\d{1,3}$/.test(arg) ? Number(arg) : NaN;
    if (!(days >= 1 && days <= EXPORT_DAYS_MAX)) return { kind: 'refused', reason: 'bad_arguments', action: 'export' };
    const { content, rows } = await this.exports.csvOfDays(days);
    const caption = this.t.commands.exportCaption(days, rows);
    const sent = await this.telegram.inTopic(call.threadId, (threadId) =>
      this.telegram.sendFile('document', { chatId: call.chatId, threadId, filename: `leads-${days}d.csv`, content, caption }),
    );
    if (!sent.ok) {
      this.logger.warn({ msg: 'export document not sent', error: sent.description });
      return this.t.commands.exportFailed;
    }
    this.logger.log({ msg: 'leads exported', user_id: call.userId, days, rows });
    return this.t.commands.exported(days, rows);
  }

  private async forget(call: CommandCall): Promise<CommandOutcome> {
    const refusal = await this.mayEraseOrExport(call.userId);
    if (refusal) return { kind: 'refused', reason: refusal, action: 'forget' };
    const contact = parseContact(call.args, this.config.leads.phoneRegion);
    if (contact) {
      const erased = await this.anonymisation.forgetContact(contact);
      // The answer does not repeat the contact: command answers carry no personal data (docs/requirements.md §6.1).
      if (erased.length === 0) return this.t.commands.forgetNoContact;
      const listed = erased.slice(0, FORGET_LISTED).map((id) => `#${id}`);
      const more = erased.length > FORGET_LISTED ? ` ${this.t.reports.more(erased.length - FORGET_LISTED)}` : '';
      return this.t.commands.forgetContact(`${erased.length} (${listed.join(', ')}${more})`);
    }
    const id = leadNumberOf(call.args);
    if (id === null) return { kind: 'refused', reason: 'bad_arguments', action: 'forget' };
    const c = this.t.commands;
    // Digits alone are a lead number; a long run of them that reads as a phone gets a hint when no lead has that number.
    const phoneLike = /^\d{10,}$/.test(call.args.trim()) && parsePhoneContact(call.args, this.config.leads.phoneRegion) !== null;
    const unknown = phoneLike ? c.forgetUnknownPhone : c.forgetUnknown;
    return { done: c.forgetDone, already: c.forgetAlready, unknown }[await this.anonymisation.forget(id)](id);
  }

  /** Erasure cannot be undone, the export hands out every contact: MANAGER_IDS decides, else being the leads group's admin. */
  private async mayEraseOrExport(userId: number): Promise<PermissionRefusal | null> {
    // Nobody in particular: neither a list of people nor getChatMember can say who it is.
    if (userId === ANONYMOUS_ADMIN_ID) return 'anonymous_admin';
    const managers = this.config.telegram.managerIds;
    if (managers) return managers.includes(userId) ? null : 'not_manager';
    const leadsChat = await this.chats.leadsChatId();
    if (!leadsChat) return 'not_admin';
    const member = await this.telegram.getChatMember(leadsChat, userId);
    if (!member.ok) {
      this.logger.warn({ msg: 'administrator check failed; /stickers_forget refused', user_id: userId, error: member.description });
      return 'admin_unknown';
    }
    return member.value.status === 'creator' || member.value.status === 'administrator' ? null : 'not_admin';
  }
}
