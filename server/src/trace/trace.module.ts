import { Module } from '@nestjs/common';
import { AccessModule } from '../access/access.module';
import { MetricsModule } from '../observability/metrics.module';
import { RepositoriesModule } from '../repositories/repositories.module';
import { TraceController } from './trace.controller';
import { TraceService } from './trace.service';

/** The trace door for integrators (and the inbox's lead page, which reads the same story). AccessModule lends the secret check of `POST /leads`. */
@Module({
  imports: [RepositoriesModule, AccessModule, MetricsModule],
  controllers: [TraceController],
  providers: [TraceService],
  exports: [TraceService],
})
export class TraceModule {}
