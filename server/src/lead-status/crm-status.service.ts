import { HttpException, Injectable, Logger } from '@nestjs/common';
import type { ExportedLead } from '../export/export.dto';
import { ExportService } from '../export/export.service';
import { invalidBody, notFound } from '../http/validation';
import { LeadStatusService } from './lead-status.service';
import type { CrmStatusBodyDto } from './lead-status.dto';

const conflict = (body: Record<string, unknown>) => new HttpException(body, 409);

/** `POST /leads/{lead_number}/status`: LeadStatusService's `set` for an integrator, its outcomes worded as docs/api.md says. */
@Injectable()
export class CrmStatusService {
  private readonly logger = new Logger('LeadStatus');

  constructor(
    private readonly statuses: LeadStatusService,
    private readonly exports: ExportService,
  ) {}

  async set(leadNumber: number, body: CrmStatusBodyDto): Promise<{ lead: ExportedLead }> {
    const outcome = await this.statuses.set({ leadId: leadNumber, expected: body.from, to: body.to, by: { integrator: body.by } });
    switch (outcome.kind) {
      // Only a Telegram user is checked against LEADS_MANAGER_IDS: never an integrator.
      case 'not_manager':
      case 'unknown_lead':
        throw notFound();
      case 'anonymised':
        throw conflict({ error: 'anonymised' });
      case 'conflict':
        throw conflict({ error: 'conflict', status: outcome.status });
      case 'not_allowed':
        throw invalidBody({ to: `cannot change from ${body.from} to ${body.to}; allowed: ${outcome.allowed.join(', ')}` });
      case 'changed': {
        if (outcome.card !== 'shown')
          this.logger.log({ msg: 'crm status change: card rewrite later', lead_number: leadNumber, card: outcome.card });
        const lead = await this.exports.lead(leadNumber);
        if (!lead) throw notFound();
        return { lead };
      }
    }
  }
}
