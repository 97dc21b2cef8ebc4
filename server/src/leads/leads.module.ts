import { Module } from '@nestjs/common';
import { AlertsModule } from '../alerts/alerts.module';
import { AnonymisationModule } from '../anonymisation/anonymisation.module';
import { MetricsModule } from '../observability/metrics.module';
import { RepositoriesModule } from '../repositories/repositories.module';
import { LeadsController } from './leads.controller';
import { LeadsService } from './leads.service';
import { FallbackVerifier } from '../outbox/fallback-verifier';
import { VisitorHasher } from './visitor-hasher';
import { SecretLockout } from './secret-lockout';
import { SubmitProblemsLog } from './submit-problems.log';

/**
 * `POST /leads` (LeadsController). Exports what the other controllers behind the same secret (the export, the trace)
 * need for `SecretGuard` (http/secret.guard.ts), so the lockout and the throttled problem log stay one per app.
 */
@Module({
  imports: [RepositoriesModule, AlertsModule, MetricsModule, AnonymisationModule],
  controllers: [LeadsController],
  // FallbackVerifier: the landing's signature of a fallback claim, checked before the decision.
  providers: [LeadsService, VisitorHasher, SecretLockout, SubmitProblemsLog, FallbackVerifier],
  exports: [LeadsService, VisitorHasher, SecretLockout, SubmitProblemsLog],
})
export class LeadsModule {}
