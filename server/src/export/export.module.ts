import { Module } from '@nestjs/common';
import { SecretGuardModule } from '../http/secret-guard.module';
import { MetricsModule } from '../observability/metrics.module';
import { RepositoriesModule } from '../repositories/repositories.module';
import { ExportController } from './export.controller';
import { ExportService } from './export.service';
import { ConversationsModule } from '../conversations/conversations.module';

/** The export door for integrators; SecretGuardModule lends the secret check of `POST /leads`. */
@Module({
  imports: [RepositoriesModule, SecretGuardModule, MetricsModule, ConversationsModule],
  controllers: [ExportController],
  providers: [ExportService],
  exports: [ExportService],
})
export class ExportModule {}
