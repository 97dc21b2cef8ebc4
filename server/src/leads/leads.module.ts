import { Module } from '@nestjs/common';
import { AlertsModule } from '../alerts/alerts.module';
import { RateLimitsModule } from '../rate-limits/rate-limits.module';
import { LeadsAccessGuard } from './leads-access.guard';
import { LeadsController } from './leads.controller';
import { TraceController } from '../trace/trace.controller';
import { LeadsRepository } from './leads.repository';
import { LeadsService } from './leads.service';
import { VisitorHasher } from './visitor-hasher';

@Module({
  imports: [AlertsModule, RateLimitsModule],
  controllers: [LeadsController, TraceController],
  providers: [LeadsService, LeadsRepository, LeadsAccessGuard, VisitorHasher],
  exports: [LeadsService, LeadsRepository],
})
export class LeadsModule {}
