import { Module } from '@nestjs/common';
import { OutboxModule } from '../outbox/outbox.module';
import { RepositoriesModule } from '../repositories/repositories.module';
import { AnonymisationService } from './anonymisation.service';
import { ContactHasher } from './contact-hasher';

/** Exports ContactHasher too: the submit decision hashes a late replay's contacts with it to look up erasures. */
@Module({
  imports: [RepositoriesModule, OutboxModule],
  providers: [AnonymisationService, ContactHasher],
  exports: [AnonymisationService, ContactHasher],
})
export class AnonymisationModule {}
