import { createHash, randomBytes } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { errorText } from '@stickers/shared';
import { LeadsChatService } from '../chats/leads-chat.service';
import { Clock } from '../clock/clock';
import { SERVER_CONFIG } from '../config/config.module';
import type { ServerConfig } from '../config/config';
import type { MessageMedia } from '../domain/lead-message';
import { LEAD_MESSAGE, type LeadMessageEvent } from '../domain/events';
import { accountName, fullName, type TelegramAccount } from '../domain/telegram-account';
import { MESSAGES } from '../i18n/i18n.module';
import { catalogueOf, type Messages } from '../i18n';
import { LeadsRepository } from '../repositories/leads.repository';
import { TelegramGateway, type BotReply } from '../telegram/telegram.gateway';
import { type Binding, type LeadMessage, LeadMessagesRepository } from './lead-messages.repository';
import { TelegramLinksRepository } from './telegram-links.repository';
import { DAY_MS } from '../clock/local-time';

/** The callback data of a button choosing the lead a person's messages go to: `talk:<lead>`. */
export const CHOOSE_PREFIX = 'talk:';

/** At most one answer a minute to a person who writes to the bot without being bound to a lead. */
const UNBOUND_ANSWER_INTERVAL_MS = 60_000;
/** 24 random bytes: 32 characters of base64url, within Telegram's 1–64 of `[A-Za-z0-9_-]` for a start parameter. */
const PAYLOAD_BYTES = 24;
const PAYLOAD = /^[A-Za-z0-9_-]{1,64}$/;

/** The stored form of a payload: its SHA-256, hex. */
function payloadHash(payload: string): string {
  return createHash('sha256').update(payload).digest('hex');
}

/** A person writing to the bot: their account, and their Telegram app's language (`language_code`), which the bot answers in. */
export type Visitor = TelegramAccount & { language_code?: string };

interface IncomingMessage {
  chatId: string;
  messageId: number;
  from: Visitor;
  /** The text, or a media message's caption. */
  text: string | null;
  media: MessageMedia | null;
}

/**
 * The conversation between a lead's visitor and the team (docs/architecture.md, "The conversation"), begun by a
 * "Continue in Telegram" link: random, single-use, one lead's for LEADS_TELEGRAM_LINK_DAYS; `/start <payload>` binds.
 */
@Injectable()
export class MessagesService {
  private readonly logger = new Logger('Conversations');
  /** When each unbound person was last answered (in memory: a restart may answer once more). */
  private readonly answeredAt = new Map<number, number>();

  constructor(
    @Inject(SERVER_CONFIG) private readonly config: ServerConfig,
    private readonly messages: LeadMessagesRepository,
    private readonly leads: LeadsRepository,
    private readonly chats: LeadsChatService,
    private readonly clock: Clock,
    private readonly emitter: EventEmitter2,
    @Inject(MESSAGES) private readonly t: Messages,
    private readonly telegram: TelegramGateway,
    private readonly links: TelegramLinksRepository,
  ) {}

  async linkFor(leadId: number): Promise<string | null> {
    const days = this.config.leads.telegramLinkDays;
    if (days === 0) return null;
    const me = await this.telegram.identity();
    if (!me.ok) return null;
    const payload = randomBytes(PAYLOAD_BYTES).toString('base64url');
    const now = this.clock.now();
    try {
      const link = { payload_hash: payloadHash(payload), lead_id: leadId, created_at: now, expires_at: now + days * DAY_MS };
      // An erased lead (a duplicate of its request): a link that could never bind is no link.
      if (!(await this.links.add(link))) return null;
    } catch (err) {
      new Logger('TelegramLinks').warn({ msg: 'telegram link not stored', lead_number: leadId, error: errorText(err) });
      return null;
    }
    return `${this.config.leads.telegramLinkRoot}/${me.value.username}?start=${payload}`;
  }

  /** The bot's answer to `/start <payload>` (what follows `/start`), with `choice`'s; null outside a private chat. */
  async start(chatType: string | undefined, payload: string, from: Visitor): Promise<BotReply | null> {
    if (chatType !== 'private') return null;
    // The bot's Restart after a block sends `/start`: the account writes to the bot again.
    await this.messages.unblocked(from.id, this.clock.now());
    const reply = await this.bind(payload.trim(), from);
    const choice = await this.choice(from);
    return choice ? { text: `${reply}\n\n${choice.text}`, keyboard: choice.keyboard } : { text: reply };
  }

  private async bind(payload: string, from: Visitor): Promise<string> {
    const says = this.says(from);
    if (payload === '') {
      // After /stop: the conversation runs again, as it was.
      const resumed = await this.resume(from);
      if (resumed) return resumed;
      // Already bound (the Restart button, a /start typed): which lead the chat is about, not an invitation to bind.
      const latest = await this.messages.latestLeadOf(from.id);
      return latest ? says.boundAgain(latest.lead_id) : says.hello;
    }
    if (!PAYLOAD.test(payload)) return says.invalid;
    // No personal data in the event (it outlives an erasure): the account itself is the link's row, erased with the lead.
    const detail = "the visitor opened the lead's link in the bot: their Telegram account is bound (GET /leads telegram_account)";
    const result = await this.links.bind(payloadHash(payload), from, this.clock.now(), detail);
    // The link tapped again (Telegram sends `/start <payload>` each time): which lead, not the first thanks; nothing bound anew.
    if (result.kind === 'bound_before') return says.boundAgain(result.leadId);
    // Their own link tapped again after /stop: as /start, the conversation runs again.
    if (result.kind === 'stopped_before') return (await this.resume(from)) ?? says.invalid;
    if (result.kind !== 'bound') {
      this.logger.log({ msg: 'telegram link refused', why: result.kind });
      return says.invalid;
    }
    this.logger.log({ msg: 'telegram account bound', lead_number: result.leadId });
    return says.bound(result.leadId);
  }

  /** `/start` after `/stop`: the person's stopped leads bound again, and the answer saying so; null: none stopped. */
  private async resume(from: Visitor): Promise<string | null> {
    const resumed = await this.messages.resume(from.id, this.clock.now());
    if (resumed.length === 0) return null;
    this.logger.log({ msg: 'visitor resumed the conversation', lead_numbers: resumed });
    return this.says(from).resumed(resumed.map((n) => `#${n}`).join(', '));
  }

  /**
   * A message in the bot's private chat: stored and relayed, or (bound to no lead) the answer to give, once a minute.
   * A reply to the team's message of a lead they are still bound to goes to that lead; any other, to `latestLeadOf`'s.
   */
  async fromVisitor(m: IncomingMessage & { replyTo?: number }): Promise<string | null> {
    const binding = (await this.answeredLead(m.from.id, m.chatId, m.replyTo)) ?? (await this.messages.latestLeadOf(m.from.id));
    await this.messages.unblocked(m.from.id, this.clock.now());
    // Bound to no lead, or its lead erased meanwhile (bound to it no more): the answer for a person bound to none.
    if (binding && (await this.store(binding.lead_id, 'in', { id: m.from.id, name: visitorName(m.from) }, m))) return null;
    return this.unboundAnswer(m.from);
  }

  /** The binding of the lead whose team message (its copy in the private chat) the visitor replies to, if still active. */
  private async answeredLead(userId: number, chatId: string, replyTo: number | undefined): Promise<Binding | null> {
    if (replyTo === undefined) return null;
    const answered = await this.messages.byCopy(chatId, replyTo);
    if (answered?.direction !== 'out' || !(await this.messages.activeLeadsOf(userId)).includes(answered.lead_id)) return null;
    return this.messages.bindingOf(answered.lead_id, userId);
  }

  /** A reply in a leads chat to a card (or a notice under it) or a relayed message, by someone who may press its buttons; else null, silently. */
  async fromTeam(m: IncomingMessage & { replyTo: number; authorName: string }): Promise<string | null> {
    if (!(await this.chats.isLeadsChat(m.chatId))) return null;
    const managers = this.config.telegram.managerIds;
    if (managers && !managers.includes(m.from.id)) return null;
    const card = await this.leads.leadAt(m.chatId, m.replyTo);
    const relayed = card === undefined ? await this.messages.byCopy(m.chatId, m.replyTo) : undefined;
    const leadId = card ?? relayed?.lead_id;
    if (leadId === undefined) return null;
    // A reply to a relayed message answers its author (a lead may have several accounts bound); to the card, the visitor.
    const to = relayed?.direction === 'in' ? relayed.author_tg_id : null;
    // Kept with the lead even when no visitor can get it (none bound, /stop): its send says so, on the message and in
    // the group, as for a visitor who blocked the bot.
    if (!(await this.store(leadId, 'out', { id: m.from.id, name: m.authorName }, m, to)))
      return this.t.group.notDelivered(this.t.group.why.notBound);
    return null;
  }

  /** `/stop` in the private chat: the visitor's leads stopped; the answer (once: a second `/stop` finds none). */
  async stop(from: Visitor): Promise<string> {
    const leads = await this.messages.stop(from.id, this.clock.now());
    // Nothing left to stop: stopped already (how to undo it), or never bound.
    if (leads.length === 0) return this.notBound(from);
    this.logger.log({ msg: 'visitor stopped the conversation', lead_numbers: leads });
    return this.says(from).stopped(leads.map((n) => `#${n}`).join(', '));
  }

  /** Bound to several leads: which one the messages go to, and a button per lead to choose another; else null. */
  private async choice(from: Visitor): Promise<Required<BotReply> | null> {
    const leads = await this.messages.activeLeadsOf(from.id);
    const current = await this.messages.latestLeadOf(from.id);
    if (leads.length < 2 || !current) return null;
    const says = this.says(from);
    const keyboard = leads.map((lead) => [{ text: says.writeAbout(lead), callback_data: `${CHOOSE_PREFIX}${lead}` }]);
    return { text: says.several(current.lead_id), keyboard: { inline_keyboard: keyboard } };
  }

  /**
   * A press of a `choice` button in the private chat: the answer to show (the lead chosen, or why not). The pressed
   * message is rewritten to name the lead chosen, so that it does not go on naming the one before.
   */
  async choose(from: Visitor, data: string, pressed: { chatId: string; messageId: number; text?: string }): Promise<string> {
    const leadId = Number(data.slice(CHOOSE_PREFIX.length));
    if (!Number.isSafeInteger(leadId) || !(await this.messages.choose(from.id, leadId, this.clock.now()))) return this.says(from).notChosen;
    this.logger.log({ msg: 'visitor chose the lead for their messages', lead_number: leadId });
    const choice = await this.choice(from);
    if (choice) {
      // The answer to /start above the choice (its own paragraph) stays.
      const above = pressed.text?.includes('\n\n') ? pressed.text.slice(0, pressed.text.lastIndexOf('\n\n') + 2) : '';
      const edited = await this.telegram.edit(pressed.chatId, pressed.messageId, above + choice.text, false, choice.keyboard);
      // Not modified: the lead pressed was the one named already.
      if (!edited.ok && edited.kind !== 'not_modified') this.logger.warn({ msg: 'the choice not rewritten', error: edited.description });
    }
    return this.says(from).chosen(leadId);
  }

  /** Per lead of `leadIds`: how many of the visitor's messages wait for the team's answer (leads with none left out). */
  waiting(leadIds: number[]): Promise<Map<number, number>> {
    return this.messages.waiting(leadIds);
  }

  /** The lead's conversation and its visitor (null: none bound, stopped or erased; `stopped`: they sent `/stop`). */
  async history(leadId: number): Promise<{ messages: LeadMessage[]; bound: Binding | null; stopped: boolean }> {
    const binding = await this.messages.bindingOf(leadId);
    const stopped = binding !== null && !bound(binding);
    return { messages: await this.messages.of(leadId), bound: stopped ? null : binding, stopped };
  }

  /** The inbox's message to the lead's visitor, sent like a member's reply; null: no visitor bound (an erasure unbinds). */
  async post(leadId: number, text: string, by: { telegramUserId: number; name: string }): Promise<LeadMessage | null> {
    if (!bound(await this.messages.bindingOf(leadId))) return null;
    return this.store(leadId, 'out', { id: by.telegramUserId, name: by.name }, { text, media: null, chatId: null, messageId: null });
  }

  private async store(
    leadId: number,
    direction: 'in' | 'out',
    author: { id: number; name: string },
    m: Pick<IncomingMessage, 'text' | 'media'> & { chatId: string | null; messageId: number | null },
    to: number | null = null,
  ): Promise<LeadMessage | null> {
    const stored = await this.messages.add({
      lead_id: leadId,
      direction,
      author_tg_id: author.id,
      author_name: author.name,
      to_tg_id: to,
      at: this.clock.now(),
      text: m.text,
      media: m.media,
      tg_chat_id: m.chatId,
      tg_message_id: m.messageId,
    });
    if (!stored) return null;
    this.logger.log({ msg: 'conversation message stored', lead_number: stored.lead_id, direction: stored.direction, message: stored.id });
    this.emitter.emit(LEAD_MESSAGE, { leadNumber: stored.lead_id, messageId: stored.id } satisfies LeadMessageEvent);
    return stored;
  }

  /** Once a minute: this person's messages reach no one (after `/stop`: how to undo it). */
  private async unboundAnswer(from: Visitor): Promise<string | null> {
    const userId = from.id;
    const now = this.clock.now();
    const last = this.answeredAt.get(userId);
    if (last !== undefined && now - last < UNBOUND_ANSWER_INTERVAL_MS) return null;
    this.answeredAt.set(userId, now);
    if (this.answeredAt.size > 10_000) {
      for (const [id, at] of this.answeredAt) if (now - at >= UNBOUND_ANSWER_INTERVAL_MS) this.answeredAt.delete(id);
    }
    return this.notBound(from);
  }

  /** What a person bound to no lead is told: after `/stop`, how to undo it; else where to send a request. */
  private async notBound(from: Visitor): Promise<string> {
    if (await this.messages.hasStopped(from.id)) return this.says(from).stoppedUnbound;
    return this.says(from).unbound(this.config.leads.landingUrl);
  }

  /** The visitor's words: their Telegram app's language when the bot has it, else LEADS_LOCALE's. */
  private says(from: Visitor): Messages['conversation'] {
    return catalogueOf(from.language_code, this.t).conversation;
  }
}

/** A binding the bot may write along: not stopped. */
function bound(binding: Binding | null): binding is Binding {
  return binding !== null && binding.stopped_at === null;
}

/** The visitor as the group reads them: `Анна Ким (@anna_k)`. */
function visitorName(account: TelegramAccount): string {
  const name = fullName(account);
  return name && account.username ? `${name} (@${account.username})` : accountName(account);
}
