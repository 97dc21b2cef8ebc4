import { Module } from '@nestjs/common';
import { ChatMigrationsRepository } from './chat-migrations.repository';
import { DatabaseHandle } from '../database/database.module';
import { DatabaseMaintenanceRepository } from './database-maintenance.repository';
import { LeadErasureRepository } from './lead-erasure.repository';
import { LeadPagesRepository } from './lead-pages.repository';
import { LeadsRepository } from './leads.repository';
import { LeasesRepository } from './leases.repository';
import { OutboxRepository } from './outbox.repository';
import { PostgresSubmitRunner } from './postgres-submit.runner';
import { RateEventsRepository } from './rate-events.repository';
import { ReportsRepository } from './reports.repository';
import { SettingsRepository } from './settings.repository';
import { SqliteSubmitRunner } from './sqlite-submit.runner';
import { SubmitRunner } from './submit-runner';
import { Transactor } from './transactor';
import { WebhookEventsRepository } from './webhook-events.repository';

const REPOSITORIES = [
  ChatMigrationsRepository,
  DatabaseMaintenanceRepository,
  LeadErasureRepository,
  LeadPagesRepository,
  LeadsRepository,
  LeasesRepository,
  OutboxRepository,
  RateEventsRepository,
  ReportsRepository,
  SettingsRepository,
  Transactor,
  WebhookEventsRepository,
];

/** The data layer: one class per table family, one method per query. Not global: a feature module imports it. */
@Module({
  providers: [
    ...REPOSITORIES,
    {
      provide: SubmitRunner,
      inject: [DatabaseHandle],
      useFactory: (database: DatabaseHandle): SubmitRunner =>
        database.kind === 'postgres' ? new PostgresSubmitRunner(database) : new SqliteSubmitRunner(database),
    },
  ],
  exports: [...REPOSITORIES, SubmitRunner],
})
export class RepositoriesModule {}
