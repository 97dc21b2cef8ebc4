import { Injectable } from '@nestjs/common';

type WriteSite = 'submit' | 'outbox';

export interface WriteFailure {
  site: WriteSite;
  at: number;
  /** The error's code, or its name. */
  code: string;
}

/**
 * Codes meaning storage cannot take writes (not a constraint or a bug): SQLite's, ours, PostgreSQL's SQLSTATEs (08…
 * connection, 25006 read-only standby, 25P02/25P03 aborted or idled transaction, 40001/40P01 serialization or deadlock,
 * 53… resources, 55P03 lock_timeout, 57014 statement_timeout, 57P01–05 shutting down, 58… I/O) and network errors.
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

/** A storage error's code for logs: its own, or CONNECTION_LOST (pg's broken connections carry none). */
export function storageErrorCode(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : 'CONNECTION_LOST';
}

/** What the last write of each site said: readiness is lost when the submit path cannot write, even if a probe can. */
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

  failing(site: WriteSite): WriteFailure | null {
    return this.failures.get(site) ?? null;
  }
}
