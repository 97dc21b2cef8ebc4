import { Module } from '@nestjs/common';
import { LeadsModule } from '../leads/leads.module';
import { MetricsModule } from '../observability/metrics.module';
import { RepositoriesModule } from '../repositories/repositories.module';
import { ExportController } from './export.controller';
import { ExportService } from './export.service';

/** The export door for integrators; LeadsModule lends the secret check and the error filter of `POST /leads`. */
@Module({
  imports: [RepositoriesModule, LeadsModule, MetricsModule],
  controllers: [ExportController],
  providers: [ExportService],
  exports: [ExportService],
})
export class ExportModule {}
