import { Module } from '@nestjs/common';
import { SecretGuardModule } from '../http/secret-guard.module';
import { MetricsModule } from '../observability/metrics.module';
import { RepositoriesModule } from '../repositories/repositories.module';
import { TraceController } from './trace.controller';
import { TraceService } from './trace.service';

/** The trace door for integrators (and the inbox's lead page, which reads the same story). SecretGuardModule lends the secret check of `POST /leads`. */
@Module({
  imports: [RepositoriesModule, SecretGuardModule, MetricsModule],
  controllers: [TraceController],
  providers: [TraceService],
  exports: [TraceService],
})
export class TraceModule {}
