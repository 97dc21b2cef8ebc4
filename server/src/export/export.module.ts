import { Module } from '@nestjs/common';
import { AccessModule } from '../access/access.module';
import { RepositoriesModule } from '../repositories/repositories.module';
import { ExportController } from './export.controller';
import { ExportService } from './export.service';
import { ConversationsModule } from '../conversations/conversations.module';

/** The export door for integrators; AccessModule lends the secret check of `POST /leads`. */
@Module({
  imports: [RepositoriesModule, AccessModule, ConversationsModule],
  controllers: [ExportController],
  providers: [ExportService],
  exports: [ExportService],
})
export class ExportModule {}
