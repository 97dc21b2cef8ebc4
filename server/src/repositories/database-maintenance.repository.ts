import { Injectable } from '@nestjs/common';
import { DatabaseHandle } from '../database/database.module';
import { checkpointTruncate, migrationsCurrent } from '../database/database';

/**
 * What services ask of the database file itself rather than of a table: whether it is still the one opened, whether
 * its migrations are current, and the truncating checkpoint after an erase. The raw handle stays in this layer.
 */
@Injectable()
export class DatabaseMaintenanceRepository {
  constructor(private readonly database: DatabaseHandle) {}

  /** DATABASE_PATH, for log lines (never for public answers). */
  get path(): string {
    return this.database.path;
  }

  get isClosed(): boolean {
    return this.database.isClosed;
  }

  /** True while the file at the path is still the one opened (same device and inode). */
  fileIsCurrent(): boolean {
    return this.database.fileIsCurrent();
  }

  migrationsCurrent(): Promise<boolean> {
    return migrationsCurrent(this.database.db);
  }

  /**
   * Moves every WAL frame into the main file and truncates the WAL (after an erase). False when a reader held it off
   * and it must be tried again. Only on an open database: ask `isClosed` first. On PostgreSQL there is nothing of ours
   * to truncate: true (dead row versions go at the next vacuum, docs/deployment.md says what that means for erasure).
   */
  checkpointTruncate(): boolean {
    if (this.database.kind === 'postgres') return true;
    return checkpointTruncate(this.database.sqlite);
  }
}
