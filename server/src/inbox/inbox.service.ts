import { HttpException, Inject, Injectable, Logger } from '@nestjs/common';
import { AnonymisationService } from '../anonymisation/anonymisation.service';
import { SERVER_CONFIG } from '../config/config.module';
import { MESSAGES } from '../i18n/i18n.module';
import type { Messages } from '../i18n';
import type { ServerConfig } from '../config/config';
import type { LeadStatus } from '../domain/lead-status';
import type { ExportedLead } from '../export/export.dto';
import { ExportService, iso, type LeadsQuery } from '../export/export.service';
import { LeadStatusService, statusRefusal } from '../lead-status/lead-status.service';
import type { LeadMessage } from '../conversations/lead-messages.repository';
import { MessagesService } from '../conversations/messages.service';
import { TraceService } from '../trace/trace.service';
import { cardUrl } from './card-link';
import { notFound } from '../http/validation';
import { ChartsService } from '../charts/charts.service';
import type { InboxViewer } from '../access/inbox-access.service';
import { fullName, personName } from '../domain/telegram-account';

/** The viewer as the cards' history names them (the buttons' rule, in the locale's words when there is no name). */
function authorOf(user: InboxViewer['user'], t: Messages): { telegramUserId: number; name: string } {
  return { telegramUserId: user.id, name: personName(user) || t.press.noName };
}

/** The inbox's reads and changes, each through the service that owns it; personal values hidden where LEADS_CARD_PII=0 hides them. */
@Injectable()
export class InboxService {
  private readonly logger = new Logger('Inbox');
  private readonly hidePersonal: boolean;

  constructor(
    @Inject(SERVER_CONFIG) private readonly config: ServerConfig,
    private readonly exports: ExportService,
    private readonly traces: TraceService,
    private readonly statuses: LeadStatusService,
    private readonly anonymisation: AnonymisationService,
    private readonly chartsService: ChartsService,
    @Inject(MESSAGES) private readonly t: Messages,
    private readonly conversation: MessagesService,
  ) {
    this.hidePersonal = !config.leads.cardPii;
  }

  me(viewer: InboxViewer) {
    // The page follows LEADS_LOCALE, and words the statuses and the fields as the cards do (the server's catalogue).
    return {
      user: viewer.user,
      manager: viewer.manager,
      may_change: this.mayChange(viewer),
      locale: this.config.locale,
      timezone: this.config.timezone,
      card_pii: this.config.leads.cardPii,
      words: { statuses: this.t.statuses, buttons: this.t.buttons, fields: this.t.card.fields, media: this.t.group.media },
    };
  }

  /** How the export reads leads for this viewer: its scope, personal values as the card shows them. */
  private readAs(viewer: InboxViewer) {
    return { hidePersonal: this.hidePersonal, scope: viewer.scope };
  }

  /** A page of leads, and by lead number the visitor's messages the team has not answered yet (a lead with none: absent). */
  async list(viewer: InboxViewer, query: LeadsQuery) {
    const page = await this.exports.page(query, this.readAs(viewer));
    const waiting = await this.conversation.waiting(page.leads.map((l) => l.lead_number));
    return { ...page, waiting: Object.fromEntries(waiting) };
  }

  charts(viewer: InboxViewer, query: { source?: string }) {
    return this.chartsService.inbox(query.source, viewer.scope);
  }

  csv(viewer: InboxViewer, query: LeadsQuery): AsyncGenerator<string> {
    return this.exports.csv(query, this.readAs(viewer));
  }

  /** The lead as the viewer may see it; 404 for none of that number, or one outside the viewer's chats. */
  private async visibleLead(viewer: InboxViewer, leadNumber: number): Promise<ExportedLead> {
    const lead = await this.exports.lead(leadNumber, this.readAs(viewer));
    if (!lead) throw notFound();
    return lead;
  }

  /** A lead's page: the lead, its repeats (oldest first, as the card's repeat block; erased values null), its story, its card's link. */
  async lead(viewer: InboxViewer, leadNumber: number) {
    const lead = await this.visibleLead(viewer, leadNumber);
    const trace = await this.traces.read(String(leadNumber));
    if (!trace.found) throw notFound();
    return {
      lead,
      repeats: lead.repeat_history.map((r) => ({ at: r.created_at, changes: r.changes })),
      history: trace.status_history.map((h) => ({ status: h.to, from: h.from, by: h.by, at: iso(h.at) })),
      // A card rewritten only shows a change the page lists already (a status, a repeat, the visitor's account): the
      // trace keeps it, the manager's list does not repeat it after every change.
      events: trace.events
        .filter((e) => e.kind !== 'card_rewritten')
        .map((e) => ({ at: iso(e.at), kind: e.kind, text: e.detail ?? e.kind })),
      card_url: cardUrl(this.config.leads.telegramLinkRoot, trace.lead.chat_id, trace.lead.message_id, trace.lead.thread_id ?? null),
    };
  }

  /** The card buttons' rules through their service: 403 / 404 / 409 / 422. */
  async setStatus(viewer: InboxViewer, leadNumber: number, to: LeadStatus, expected: LeadStatus): Promise<{ lead: ExportedLead }> {
    await this.visibleLead(viewer, leadNumber);
    const outcome = await this.statuses.set({ leadId: leadNumber, expected, to, by: authorOf(viewer.user, this.t) });
    if (outcome.kind !== 'changed') throw statusRefusal(outcome, 'status', expected, to);
    if (outcome.card !== 'shown')
      this.logger.log({ msg: 'inbox status change: card rewrite later', lead_number: leadNumber, card: outcome.card });
    return { lead: await this.visibleLead(viewer, leadNumber) };
  }

  /** Erasure, for managers only (the body's DTO lets only `{"confirm": true}` through); erasing one again is no error. */
  async erase(viewer: InboxViewer, leadNumber: number): Promise<{ lead: ExportedLead }> {
    if (!viewer.manager) throw new HttpException({ error: 'forbidden' }, 403);
    await this.visibleLead(viewer, leadNumber);
    const result = await this.anonymisation.forget(leadNumber);
    this.logger.log({ msg: 'inbox erasure', lead_number: leadNumber, user_id: viewer.user.id, result });
    return { lead: await this.visibleLead(viewer, leadNumber) };
  }

  async messages(viewer: InboxViewer, leadNumber: number) {
    await this.visibleLead(viewer, leadNumber);
    const { messages, bound, stopped } = await this.conversation.history(leadNumber);
    return {
      messages: messages.map((m) => this.messageOf(m)),
      bound: bound && {
        username: this.hidePersonal ? null : bound.tg_username,
        name: this.hidePersonal ? '' : fullName({ first_name: bound.tg_first_name, last_name: bound.tg_last_name }),
      },
      stopped,
    };
  }

  /** A message to the visitor, sent like a member's reply; by whoever may change the status (403), to a bound visitor (409). */
  async postMessage(viewer: InboxViewer, leadNumber: number, text: string) {
    await this.visibleLead(viewer, leadNumber);
    if (!this.mayChange(viewer)) throw new HttpException({ error: 'forbidden' }, 403);
    const message = await this.conversation.post(leadNumber, text, authorOf(viewer.user, this.t));
    if (!message) throw new HttpException({ error: 'not_bound' }, 409);
    return { message: this.messageOf(message) };
  }

  /** The card buttons' rule, which the status service applies to a change: LEADS_MANAGER_IDS when set, else anyone. */
  private mayChange(viewer: InboxViewer): boolean {
    return this.config.telegram.managerIds?.includes(viewer.user.id) ?? true;
  }

  private messageOf(m: LeadMessage) {
    const personal = m.direction === 'in' && this.hidePersonal;
    return {
      id: m.id,
      direction: m.direction,
      author: personal ? null : m.author_name,
      text: m.text,
      media: m.media,
      at: iso(m.at),
      state: m.state,
      error: m.error,
    };
  }
}
