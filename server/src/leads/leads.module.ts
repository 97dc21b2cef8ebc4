import { Module } from '@nestjs/common';
import { AlertsModule } from '../alerts/alerts.module';
import { MetricsModule } from '../observability/metrics.module';
import { RepositoriesModule } from '../repositories/repositories.module';
import { LeadsAccessGuard } from './leads-access.guard';
import { LeadsController } from './leads.controller';
import { LeadsService } from './leads.service';
import { VisitorHasher } from './visitor-hasher';
import { SecretLockout } from './secret-lockout';
import { SubmitProblemsLog } from './submit-problems.log';

/**
 * `POST /leads`. Exports what another controller behind the same secret (the trace) needs to use `LeadsAccessGuard`
 * and `LeadsApiErrorFilter`, so the lockout and the throttled problem log stay one per app.
 */
@Module({
  imports: [RepositoriesModule, AlertsModule, MetricsModule],
  controllers: [LeadsController],
  providers: [LeadsService, LeadsAccessGuard, VisitorHasher, SecretLockout, SubmitProblemsLog],
  exports: [LeadsService, VisitorHasher, SecretLockout, SubmitProblemsLog],
})
export class LeadsModule {}
