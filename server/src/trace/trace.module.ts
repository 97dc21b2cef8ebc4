import { Module } from '@nestjs/common';
import { AccessModule } from '../access/access.module';
import { RepositoriesModule } from '../repositories/repositories.module';
import { TraceController } from './trace.controller';
import { TraceService } from './trace.service';

/** The trace door for integrators, and the story the inbox's lead page reads. */
@Module({
  imports: [RepositoriesModule, AccessModule],
  controllers: [TraceController],
  providers: [TraceService],
  exports: [TraceService],
})
export class TraceModule {}
