import { Module } from '@nestjs/common';
import { AlertThrottlesRepository } from './alert-throttles.repository';
import { DatabaseMaintenanceRepository } from './database-maintenance.repository';
import { ErasedContactsRepository } from './erased-contacts.repository';
import { JobRunsRepository } from './job-runs.repository';
import { LeadEventsRepository } from './lead-events.repository';
import { LeadStatusChangesRepository } from './lead-status-changes.repository';
import { LeadSubmitRepository } from './lead-submit.repository';
import { LeadsRepository } from './leads.repository';
import { LeasesRepository } from './leases.repository';
import { RateEventsRepository } from './rate-events.repository';
import { ReportsRepository } from './reports.repository';
import { SettingsRepository } from './settings.repository';
import { TelegramUpdatesRepository } from './telegram-updates.repository';
import { TraceRepository } from './trace.repository';
import { Transactor } from './transactor';
import { WebhookDeliveriesRepository } from './webhook-deliveries.repository';

const REPOSITORIES = [
  AlertThrottlesRepository,
  DatabaseMaintenanceRepository,
  ErasedContactsRepository,
  JobRunsRepository,
  LeadEventsRepository,
  LeadStatusChangesRepository,
  LeadSubmitRepository,
  LeadsRepository,
  LeasesRepository,
  RateEventsRepository,
  ReportsRepository,
  SettingsRepository,
  TelegramUpdatesRepository,
  TraceRepository,
  Transactor,
  WebhookDeliveriesRepository,
];

/**
 * The data layer: one class per table or aggregate, one method per query; services reach the database only through
 * these. Not global: a feature module that needs a repository imports this module (one instance of each for the app).
 */
@Module({ providers: REPOSITORIES, exports: REPOSITORIES })
export class RepositoriesModule {}
