import { Module } from '@nestjs/common';
import { AlertsModule } from '../alerts/alerts.module';
import { RateLimitsModule } from '../rate-limits/rate-limits.module';
import { LeadsAccessGuard } from './leads-access.guard';
import { LeadsController } from './leads.controller';
import { TraceController } from '../trace/trace.controller';
import { LeadsService } from './leads.service';
import { VisitorHasher } from './visitor-hasher';
import { SecretLockout } from './secret-lockout';
import { LeadSubmitRepository } from './lead-submit.repository';
import { SubmitProblemsLog } from './submit-problems.log';

@Module({
  imports: [AlertsModule, RateLimitsModule],
  controllers: [LeadsController, TraceController],
  providers: [LeadsService, LeadsAccessGuard, VisitorHasher, SecretLockout, LeadSubmitRepository, SubmitProblemsLog],
  exports: [LeadsService],
})
export class LeadsModule {}
