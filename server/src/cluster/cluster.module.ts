import { Module } from '@nestjs/common';
import { RepositoriesModule } from '../repositories/repositories.module';
import { DEFAULT_LEASE_TIMINGS, LEASE_TIMINGS, LeaseService } from './lease.service';

/** Several instances on one database: who runs the once-at-a-time jobs. */
@Module({
  imports: [RepositoriesModule],
  providers: [LeaseService, { provide: LEASE_TIMINGS, useValue: DEFAULT_LEASE_TIMINGS }],
  exports: [LeaseService],
})
export class ClusterModule {}
