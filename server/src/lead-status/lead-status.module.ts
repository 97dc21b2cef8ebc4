import { Module } from '@nestjs/common';
import { ExportModule } from '../export/export.module';
import { AccessModule } from '../access/access.module';
import { OutboxModule } from '../outbox/outbox.module';
import { RepositoriesModule } from '../repositories/repositories.module';
import { LeadStatusController } from './lead-status.controller';
import { LeadStatusService } from './lead-status.service';

/** A lead's status and its doors: the card's buttons (bot/), the inbox, and a CRM's `POST /leads/{lead_number}/status`. */
@Module({
  imports: [RepositoriesModule, OutboxModule, ExportModule, AccessModule],
  controllers: [LeadStatusController],
  providers: [LeadStatusService],
  exports: [LeadStatusService],
})
export class LeadStatusModule {}
