import { Module } from '@nestjs/common';
import { LeadsModule } from '../leads/leads.module';
import { MetricsModule } from '../observability/metrics.module';
import { RepositoriesModule } from '../repositories/repositories.module';
import { TraceController } from './trace.controller';
import { TraceService } from './trace.service';

/** The trace door for integrators (and the inbox's lead page, which reads the same story). LeadsModule lends the secret check and the error filter of `POST /leads`. */
@Module({
  imports: [RepositoriesModule, LeadsModule, MetricsModule],
  controllers: [TraceController],
  providers: [TraceService],
  exports: [TraceService],
})
export class TraceModule {}
