import { Module } from '@nestjs/common';
import { RepositoriesModule } from '../repositories/repositories.module';
import { DEFAULT_LEASE_TIMINGS, LEASE_TIMINGS, LeaseService } from './lease.service';
import { PassSchedule } from './pass-schedule';

/** Several instances on one database: who runs the once-at-a-time jobs, and their passes' start and end. */
@Module({
  imports: [RepositoriesModule],
  providers: [LeaseService, PassSchedule, { provide: LEASE_TIMINGS, useValue: DEFAULT_LEASE_TIMINGS }],
  exports: [LeaseService, PassSchedule],
})
export class ClusterModule {}
