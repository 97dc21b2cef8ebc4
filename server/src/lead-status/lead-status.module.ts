import { Module } from '@nestjs/common';
import { OutboxModule } from '../outbox/outbox.module';
import { LeadStatusRepository } from './lead-status.repository';
import { LeadStatusService } from './lead-status.service';

@Module({
  imports: [OutboxModule],
  providers: [LeadStatusService, LeadStatusRepository],
  exports: [LeadStatusService, LeadStatusRepository],
})
export class LeadStatusModule {}
