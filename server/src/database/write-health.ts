import { Injectable } from '@nestjs/common';

/** Where a write to the database happened: the submit path, the outbox, or anything else worth naming. */
export type WriteSite = 'submit' | 'outbox' | 'housekeeping' | 'bot';

export interface WriteFailure {
  site: WriteSite;
  at: number;
  /** SQLite's error code (`SQLITE_FULL`, `SQLITE_IOERR_…`, `SQLITE_READONLY`, …) or the error's name. */
  code: string;
}

/**
 * Error codes that mean storage cannot take writes (as opposed to a constraint or a bug); DatabaseGoneError's and
 * DatabaseUnreachableError's (no PostgreSQL connection could be had, for whatever reason) too.
 * SQLite's, and PostgreSQL's SQLSTATEs: 08… connection exceptions, 25006 a read-only server (a standby
 * after a failover), 25P02 a statement on a transaction already aborted and 25P03 a session ended for idling in a
 * transaction, 40001/40P01 a serialization failure or deadlock (nothing was stored; a retry may pass), 53…
 * insufficient resources (53100 disk full), 55P03 a lock not granted in time (lock_timeout), 57014 a statement
 * cancelled (statement_timeout), 57P01–57P05 the server shutting down, restarting or not accepting connections yet,
 * 58… system I/O errors; and the network errors of a connection to it.
 */
const STORAGE_CODES =
  /^(SQLITE_(FULL|IOERR|READONLY|CANTOPEN|CORRUPT|NOTADB|BUSY|LOCKED|PROTOCOL)|DATABASE_FILE_GONE|DATABASE_UNREACHABLE|08[0-9A-Z]{3}$|25006$|25P0[23]$|40001$|40P01$|53[0-9A-Z]{3}$|55P03$|57014$|57P0[1-5]$|58[0-9A-Z]{3}$|ECONNREFUSED$|ECONNRESET$|ETIMEDOUT$|EPIPE$|ENOTFOUND$|EAI_AGAIN$)/;
/** pg's own errors when a connection breaks or cannot be had carry no code, only these messages. */
const CONNECTION_LOST =
  /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Client was closed and is not queryable|Cannot use a pool after calling end)/;

/** True when an error says the database cannot be written right now (disk full, file gone, locked, I/O, unreachable). */
export function isStorageError(err: unknown): boolean {
  const { code, message } = (err ?? {}) as { code?: unknown; message?: unknown };
  if (typeof code === 'string') return STORAGE_CODES.test(code);
  return typeof message === 'string' && CONNECTION_LOST.test(message);
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
    const lost = err instanceof Error && CONNECTION_LOST.test(err.message) ? 'CONNECTION_LOST' : null;
    this.failures.set(site, { site, at, code: typeof code === 'string' ? code : (lost ?? (err instanceof Error ? err.name : 'unknown')) });
  }

  recordSuccess(site: WriteSite): void {
    this.failures.delete(site);
  }

  /** The failure of a site whose last write failed, if any. */
  failing(site: WriteSite): WriteFailure | null {
    return this.failures.get(site) ?? null;
  }
}
