import type { Provider } from '@nestjs/common';
import { DatabaseHandle } from '../database/database.module';
import { PostgresSubmitRunner } from './postgres-submit.runner';
import { SqliteSubmitRunner } from './sqlite-submit.runner';
import { SubmitRunner } from './submit-runner';

/** The submit runner of the app's database, chosen once from `DatabaseHandle.kind` when the module is built. */
export const submitRunnerProvider: Provider = {
  provide: SubmitRunner,
  inject: [DatabaseHandle],
  useFactory: (database: DatabaseHandle): SubmitRunner =>
    database.kind === 'postgres' ? new PostgresSubmitRunner(database) : new SqliteSubmitRunner(database),
};
