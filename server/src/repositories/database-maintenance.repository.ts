import { Injectable } from '@nestjs/common';
import { DatabaseHandle } from '../database/database.module';
import { checkpointTruncate, migrationsCurrent } from '../database/database';

/** What services ask of the database itself rather than of a table; the raw handle stays in this layer. */
@Injectable()
export class DatabaseMaintenanceRepository {
  constructor(private readonly database: DatabaseHandle) {}

  /** For log lines, never for public answers. */
  get path(): string {
    return this.database.path;
  }

  get isClosed(): boolean {
    return this.database.isClosed;
  }

  fileIsCurrent(): boolean {
    return this.database.fileIsCurrent();
  }

  migrationsCurrent(): Promise<boolean> {
    return migrationsCurrent(this.database.db);
  }

  /** After an erase (ask `isClosed` first); false: try again. PostgreSQL: nothing to truncate (docs/deployment.md). */
  checkpointTruncate(): boolean {
    return this.database.kind === 'postgres' || checkpointTruncate(this.database.sqlite);
  }
}
