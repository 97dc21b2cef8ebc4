import { Injectable } from '@nestjs/common';
import { hasCard, type Outcome } from './outcome';
import type { OutboxRow } from '../repositories/outbox.repository';
import { TelegramHandler } from './telegram-handler';

/** The outbox's `card_edit` rows (§4.7): a published card rewritten to show its lead as stored. */
@Injectable()
export class CardRewriter extends TelegramHandler {
  async shows(leadId: number): Promise<boolean> {
    const lead = await this.repo.findLead(leadId);
    return lead !== undefined && lead.published_at !== null && lead.card_dirty_at === null;
  }

  async handle(row: OutboxRow): Promise<Outcome> {
    const lead = await this.repo.findLead(row.lead_id);
    if (!lead || lead.card_dirty_at === null) return { done: 'shown' };
    // Not in the group (a card gone, published anew): the new card shows the lead as it is.
    if (!hasCard(lead)) return { done: 'card not published' };
    const edit = await this.editCard('rewrite', lead, row.attempts);
    if (!('next' in edit)) return edit;
    const { next, description, minimal } = edit;
    switch (next.step) {
      case 'success': {
        const dirtyAt = lead.card_dirty_at;
        const anonymised = lead.anonymised_at !== null ? ', anonymised' : '';
        const detail = `status ${lead.status}${anonymised}${minimal ? `; minimal card (${minimal})` : ''}`;
        const refreshed = () => this.repo.markCardRefreshed(lead.id, dirtyAt, row.id);
        return { done: 'sent', record: this.recorded(refreshed, [lead.id, 'card_rewritten', detail]) };
      }
      case 'republish':
        return this.cardGone(lead.id, description);
      case 'retry':
        return this.retryLater(next, description, { leadId: lead.id, kind: 'card_rewrite_failed', msg: 'card rewrite attempt failed' });
    }
  }
}
