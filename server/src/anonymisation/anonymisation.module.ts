import { Module } from '@nestjs/common';
import { OutboxModule } from '../outbox/outbox.module';
import { RepositoriesModule } from '../repositories/repositories.module';
import { AnonymisationService } from './anonymisation.service';

@Module({ imports: [RepositoriesModule, OutboxModule], providers: [AnonymisationService], exports: [AnonymisationService] })
export class AnonymisationModule {}
