import { Module } from '@nestjs/common';
import { AnonymisationRepository } from './anonymisation/anonymisation.repository';
import { AnonymisationService } from './anonymisation/anonymisation.service';
import { HousekeepingRepository } from './housekeeping/housekeeping.repository';
import { HousekeepingScheduler } from './housekeeping/housekeeping.scheduler';
import { HousekeepingService } from './housekeeping/housekeeping.service';
import { OutboxModule } from './outbox/outbox.module';
import { RateLimitsModule } from './rate-limits/rate-limits.module';
import { ReportsRepository } from './reports/reports.repository';
import { ReportsService } from './reports/reports.service';

/** What runs besides the request path: anonymisation, reports, and the once-a-minute housekeeping. */
@Module({
  imports: [OutboxModule, RateLimitsModule],
  providers: [
    AnonymisationService,
    AnonymisationRepository,
    ReportsService,
    ReportsRepository,
    HousekeepingService,
    HousekeepingRepository,
    HousekeepingScheduler,
  ],
  exports: [AnonymisationService, ReportsService, HousekeepingService, HousekeepingScheduler],
})
export class OperationsModule {}
