import { HttpException, Inject, Injectable, Logger } from '@nestjs/common';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { STATUS_CALLBACK } from '../cards/lead-statuses';
import { isLeadStatus, isTransition, LEAD_TRANSITIONS, type LeadStatus } from '../domain/lead-status';
import { LeadsChatService } from '../chats/leads-chat.service';
import { Clock } from '../clock/clock';
import { SERVER_CONFIG } from '../config/config.module';
import type { ServerConfig } from '../config/config';
import { OutboxService, type CardRefresh } from '../outbox/outbox.service';
import { CRM_USER_ID, LeadsRepository, type StatusChange } from '../repositories/leads.repository';
import { LEAD_STATUS_CHANGED, type LeadStatusChangedEvent } from '../domain/events';
import { MESSAGES } from '../i18n/i18n.module';
import type { Messages } from '../i18n';
import { invalidBody, notFound } from '../http/validation';

export interface ButtonPress {
  data: string;
  /** The card whose button was pressed. */
  chatId: string;
  messageId: number;
  userId: number;
  userName: string;
}

/** A change from outside a card, compare-and-set against `expected`, by a Telegram user (the inbox) or an integrator (a CRM). */
interface StatusRequest {
  leadId: number;
  expected: LeadStatus;
  to: LeadStatus;
  /** `telegramUserId`: null for an integrator, never checked against LEADS_MANAGER_IDS. */
  by: { telegramUserId: number | null; name: string };
}

/** What a StatusRequest came to, for the door to word. */
type StatusOutcome =
  | { kind: 'changed'; card: CardRefresh }
  | { kind: 'not_manager' }
  | { kind: 'unknown_lead' }
  | { kind: 'anonymised' }
  | { kind: 'not_allowed'; allowed: readonly LeadStatus[] }
  | { kind: 'conflict'; status: LeadStatus };

/** A refused StatusRequest as the inbox and a CRM answer it; `field`: the body's name of the status to set. */
export function statusRefusal(outcome: Exclude<StatusOutcome, { kind: 'changed' }>, field: string, from: LeadStatus, to: LeadStatus) {
  switch (outcome.kind) {
    case 'not_manager':
      return new HttpException({ error: 'forbidden' }, 403);
    case 'unknown_lead':
      return notFound();
    case 'anonymised':
      return new HttpException({ error: 'anonymised' }, 409);
    case 'conflict':
      return new HttpException({ error: 'conflict', status: outcome.status }, 409);
    case 'not_allowed':
      return invalidBody({ [field]: `cannot change from ${from} to ${to}; allowed: ${outcome.allowed.join(', ')}` });
  }
}

/** docs/requirements.md §5.3: a press is a compare-and-set on the status, recorded, the card rewritten, always answered. */
@Injectable()
export class LeadStatusService {
  private readonly logger = new Logger('LeadStatus');

  constructor(
    @Inject(SERVER_CONFIG) private readonly config: ServerConfig,
    private readonly leads: LeadsRepository,
    private readonly outbox: OutboxService,
    private readonly chats: LeadsChatService,
    private readonly clock: Clock,
    private readonly emitter: EventEmitter2,
    @Inject(MESSAGES) private readonly t: Messages,
  ) {}

  /** The text to answer the callback with. */
  async press(p: ButtonPress): Promise<string> {
    // Any leads chat: LEADS_CHAT_ID or one of LEADS_ROUTES; the card check below names the lead's own.
    if (!(await this.chats.isLeadsChat(p.chatId))) return this.t.press.foreignChat;
    const managers = this.config.telegram.managerIds;
    if (managers && !managers.includes(p.userId)) return this.t.press.notManager;
    const m = STATUS_CALLBACK.exec(p.data);
    if (!m || !isLeadStatus(m[2]) || !isLeadStatus(m[3]) || !isTransition(m[2], m[3])) return this.t.press.malformed;
    const [leadId, from, to] = [Number(m[1]), m[2], m[3]];
    const lead = await this.leads.findLead(leadId);
    if (!lead) return this.t.press.unknownLead;
    // The button must be on this lead's card: an old one (a database replaced, numbering restarted) may name another lead.
    if (lead.chat_id !== p.chatId || lead.message_id !== p.messageId) return this.t.press.staleCard;
    if (lead.anonymised_at !== null) return this.t.press.anonymised;

    const userName = p.userName || this.t.press.noName;
    const change: StatusChange = { leadId, from, to, userId: p.userId, userName, at: this.clock.now() };
    const changed = await this.change(change, lead.request_id);
    if (!changed) {
      const now = await this.leads.findLead(leadId);
      const who = now?.status_changed_by ? ` (${now.status_changed_by})` : '';
      // The card may be stale if an earlier rewrite failed: rewrite it now so the presser sees the truth.
      const card = await this.outbox.refreshCard(leadId);
      // Erased meanwhile (the check above came before the erasure's commit): the status did not change, the lead did.
      if (now?.anonymised_at != null) return this.t.press.anonymised;
      const text = `${this.t.press.alreadyChanged(now ? this.t.statuses[now.status] : '—')}${who}`;
      return card === 'shown' ? `${text}.` : this.withCard(text, card);
    }
    return this.withCard(this.t.press.done(this.t.statuses[to]), await this.outbox.refreshCard(leadId));
  }

  /** A change by the rules of a press; the lead need not have a card yet. */
  async set(r: StatusRequest): Promise<StatusOutcome> {
    const managers = this.config.telegram.managerIds;
    if (r.by.telegramUserId !== null && managers && !managers.includes(r.by.telegramUserId)) return { kind: 'not_manager' };
    const lead = await this.leads.findLead(r.leadId);
    if (!lead) return { kind: 'unknown_lead' };
    if (lead.anonymised_at !== null) return { kind: 'anonymised' };
    if (lead.status !== r.expected) return { kind: 'conflict', status: lead.status };
    if (!isTransition(r.expected, r.to)) return { kind: 'not_allowed', allowed: LEAD_TRANSITIONS[r.expected] };
    const userId = r.by.telegramUserId ?? CRM_USER_ID;
    const change: StatusChange = { leadId: r.leadId, from: r.expected, to: r.to, userId, userName: r.by.name, at: this.clock.now() };
    if (!(await this.change(change, lead.request_id))) {
      const now = await this.leads.findLead(r.leadId);
      if (now?.anonymised_at != null) return { kind: 'anonymised' };
      return { kind: 'conflict', status: now?.status ?? lead.status };
    }
    return { kind: 'changed', card: await this.outbox.refreshCard(r.leadId) };
  }

  /** "Done" only when the card in Telegram shows the change; otherwise the presser is told the card will catch up. */
  private withCard(text: string, card: CardRefresh): string {
    return card === 'shown' ? text : `${text}. ${this.t.press.cardLater}`;
  }

  /** The compare-and-set and its history row, committed together: false when someone was first. */
  private async change(c: StatusChange, requestId: string): Promise<boolean> {
    if (!(await this.leads.changeStatus(c))) return false;
    this.logger.log({ msg: 'status changed', lead_number: c.leadId, request_id: requestId, from: c.from, to: c.to, user_id: c.userId });
    const { leadId: leadNumber, ...change } = c;
    this.emitter.emit(LEAD_STATUS_CHANGED, { leadNumber, ...change } satisfies LeadStatusChangedEvent);
    return true;
  }
}
