import { Module } from '@nestjs/common';
import { AlertsModule } from '../alerts/alerts.module';
import { AnonymisationModule } from '../anonymisation/anonymisation.module';
import { MetricsModule } from '../observability/metrics.module';
import { RepositoriesModule } from '../repositories/repositories.module';
import { LeadsAccessGuard } from './leads-access.guard';
import { LeadsApiErrorFilter } from './leads-api.error';
import { LeadsRouteMount } from './leads-route.mount';
import { LeadsController } from './leads.controller';
import { LeadsService } from './leads.service';
import { VisitorHasher } from './visitor-hasher';
import { SecretLockout } from './secret-lockout';
import { SubmitProblemsLog } from './submit-problems.log';

/**
 * `POST /leads` (LeadsController, mounted ahead of Express by LeadsRouteMount). Exports what another controller behind the same secret (the trace) needs to use `LeadsAccessGuard`
 * and `LeadsApiErrorFilter`, so the lockout and the throttled problem log stay one per app.
 */
@Module({
  imports: [RepositoriesModule, AlertsModule, MetricsModule, AnonymisationModule],
  // LeadsController is not a Nest route: LeadsRouteMount puts it ahead of Express (see its comment).
  providers: [
    LeadsController,
    LeadsRouteMount,
    LeadsService,
    LeadsAccessGuard,
    LeadsApiErrorFilter,
    VisitorHasher,
    SecretLockout,
    SubmitProblemsLog,
  ],
  exports: [LeadsController, LeadsService, VisitorHasher, SecretLockout, SubmitProblemsLog],
})
export class LeadsModule {}
