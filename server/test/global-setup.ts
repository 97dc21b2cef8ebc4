// A temp dir for the run's migrated database templates (test/support/test-database.ts) and, with
// LEADS_TEST_DATABASE=postgres, one throwaway PostgreSQL server for the whole jest run; every test file's servers get
// databases on it. Jest's workers start after this and inherit the environment.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startPostgres, type TestPostgres } from './support/postgres';

const KEY = Symbol.for('stickers-leads.jest-run');

export interface JestRun {
  templates: string;
  pg?: TestPostgres;
}

export default async function globalSetup(): Promise<void> {
  const run: JestRun = { templates: mkdtempSync(join(tmpdir(), 'leads-templates-')) };
  process.env.LEADS_TEST_TEMPLATES = run.templates;
  (globalThis as { [KEY]?: JestRun })[KEY] = run;
  if (process.env.LEADS_TEST_DATABASE !== 'postgres') return;
  run.pg = await startPostgres({ maxConnections: 500 });
  process.env.LEADS_TEST_POSTGRES_URL = run.pg.url;
}
