#!/usr/bin/env node
/**
 * `npm run leads -- trace <request_id | lead number>`: the whole story of a request, read from the SQLite file
 * (DATABASE_PATH, default ./data/leads.sqlite) without starting the server.
 */
import { existsSync } from 'node:fs';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import type { Database } from './database/schema';
import { formatTrace, readTrace } from './trace/trace.repository';

async function main(argv: string[]): Promise<number> {
  const [command, key, ...rest] = argv;
  const json = rest.includes('--json');
  if (command !== 'trace' || !key) {
    console.error('usage: npm run leads -- trace <request_id | lead number> [--json]');
    return 2;
  }
  const path = process.env.DATABASE_PATH || './data/leads.sqlite';
  if (!existsSync(path)) {
    console.error(`no database at ${path} (set DATABASE_PATH)`);
    return 2;
  }
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: new BetterSqlite3(path, { readonly: true, fileMustExist: true }) }) });
  try {
    const trace = await readTrace(db, key);
    console.log(json ? JSON.stringify(trace, null, 2) : formatTrace(trace));
    return trace.found ? 0 : 1;
  } finally {
    await db.destroy();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    console.error(err instanceof Error ? err.message : String(err));
    process.exit(2);
  },
);
