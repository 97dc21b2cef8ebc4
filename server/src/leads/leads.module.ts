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

/**
 * `POST /leads` (LeadsController), behind `SecretGuard` (access/secret.guard.ts) with the export and the trace: all three
 * import AccessModule, so the lockout stays one per app.
 */
@Module({
  imports: [RepositoriesModule, AlertsModule, MetricsModule, AnonymisationModule, AccessModule, ConversationsModule],
  controllers: [LeadsController],
  // FallbackVerifier: the landing's signature of a fallback claim, checked before the decision.
  providers: [LeadsService, SubmitProblemsLog, FallbackVerifier],
  exports: [LeadsService],
})
export class LeadsModule {}
