import { Module } from '@nestjs/common';
import { AccessModule } from '../access/access.module';
import { MetricsModule } from '../observability/metrics.module';
import { RepositoriesModule } from '../repositories/repositories.module';
import { ConversationsModule } from '../conversations/conversations.module';
import { TraceController } from '../trace/trace.controller';
import { TraceService } from '../trace/trace.service';
import { ExportController } from './export.controller';
import { ExportService } from './export.service';

/**
 * What integrators read back behind the secret of `POST /leads` (AccessModule's check): the leads, their CSV, a request's
 * trace; the trace is also the story the inbox's lead page and the CLI read.
 */
@Module({
  imports: [RepositoriesModule, AccessModule, MetricsModule, ConversationsModule],
  // In this order: the OpenAPI document lists the trace before the CSV.
  controllers: [TraceController, ExportController],
  providers: [ExportService, TraceService],
  exports: [ExportService, TraceService],
})
export class ExportModule {}
