import { Injectable } from '@nestjs/common';

/** Where a write to the database happened: the submit path, the outbox, or anything else worth naming. */
export type WriteSite = 'submit' | 'outbox' | 'housekeeping' | 'bot';

export interface WriteFailure {
  site: WriteSite;
  at: number;
  /** SQLite's error code (`SQLITE_FULL`, `SQLITE_IOERR_…`, `SQLITE_READONLY`, …) or the error's name. */
  code: string;
}

/** Error codes that mean storage cannot take writes (as opposed to a constraint or a bug); DatabaseGoneError's too. */
const STORAGE_CODES = /^(SQLITE_(FULL|IOERR|READONLY|CANTOPEN|CORRUPT|NOTADB|BUSY|LOCKED|PROTOCOL)|DATABASE_FILE_GONE)/;

/** True when an error says the database cannot be written right now (disk full, file gone, locked, I/O). */
export function isStorageError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && STORAGE_CODES.test(code);
}

/**
 * What the last writes of each site said. Readiness reads it: a server whose submit path cannot write is not ready,
 * even when a tiny probe write still fits (a full disk leaves free pages for small upserts).
 */
@Injectable()
export class WriteHealth {
  private readonly failures = new Map<WriteSite, WriteFailure>();

  recordFailure(site: WriteSite, err: unknown, at: number): void {
    const code = (err as { code?: unknown } | null)?.code;
    this.failures.set(site, { site, at, code: typeof code === 'string' ? code : err instanceof Error ? err.name : 'unknown' });
  }

  recordSuccess(site: WriteSite): void {
    this.failures.delete(site);
  }

  /** The failure of a site whose last write failed, if any. */
  failing(site: WriteSite): WriteFailure | null {
    return this.failures.get(site) ?? null;
  }
}
