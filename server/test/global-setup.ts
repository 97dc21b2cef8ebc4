// With LEADS_TEST_DATABASE=postgres, one throwaway PostgreSQL server for the whole jest run; every test
// file's servers get databases on it (test/support/test-database.ts). Nothing to do on SQLite.
import { startPostgres, type TestPostgres } from './support/postgres';

const KEY = Symbol.for('stickers-leads.jest-postgres');

export default async function globalSetup(): Promise<void> {
  if (process.env.LEADS_TEST_DATABASE !== 'postgres') return;
  // Jest's workers start after this and inherit the environment.
  const pg = await startPostgres({ maxConnections: 500 });
  process.env.LEADS_TEST_POSTGRES_URL = pg.url;
  (globalThis as { [KEY]?: TestPostgres })[KEY] = pg;
}
