import { Module } from '@nestjs/common';
import { AlertsModule } from '../alerts/alerts.module';
import { AnonymisationModule } from '../anonymisation/anonymisation.module';
import { MetricsModule } from '../observability/metrics.module';
import { RepositoriesModule } from '../repositories/repositories.module';
import { LeadsController } from './leads.controller';
import { LeadsService } from './leads.service';
import { FallbackVerifier } from '../access/fallback-verifier';
import { AccessModule } from '../access/access.module';
import { SubmitProblemsLog } from './submit-problems.log';
import { ConversationsModule } from '../conversations/conversations.module';

@Module({
  imports: [RepositoriesModule, AlertsModule, MetricsModule, AnonymisationModule, AccessModule, ConversationsModule],
  controllers: [LeadsController],
  providers: [LeadsService, SubmitProblemsLog, FallbackVerifier],
  exports: [LeadsService],
})
export class LeadsModule {}
