import { Module } from '@nestjs/common';
import { OutboxModule } from '../outbox/outbox.module';
import { RepositoriesModule } from '../repositories/repositories.module';
import { LeadStatusService } from './lead-status.service';

@Module({
  imports: [RepositoriesModule, OutboxModule],
  providers: [LeadStatusService],
  exports: [LeadStatusService],
})
export class LeadStatusModule {}
