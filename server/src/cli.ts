#!/usr/bin/env node
/**
 * Ops commands, run beside the server on the same SQLite file (DATABASE_PATH, default ./data/leads.sqlite):
 *   npm run leads -- trace <request_id | lead number> [--json]   the whole story of a request
 *   npm run leads -- backup <file>                               a consistent copy of the live database
 */
import { existsSync } from 'node:fs';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { backupDatabase } from './database/backup';
import type { Database } from './database/schema';
import { TraceRepository } from './repositories/trace.repository';
import { formatTrace } from './trace/trace-format';
import { TraceService } from './trace/trace.service';

const USAGE = ['usage: npm run leads -- trace <request_id | lead number> [--json]', '       npm run leads -- backup <file>'].join('\n');

async function trace(path: string, key: string, json: boolean): Promise<number> {
  if (!existsSync(path)) {
    console.error(`no database at ${path} (set DATABASE_PATH)`);
    return 2;
  }
  const database = new BetterSqlite3(path, { readonly: true, fileMustExist: true });
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database }) });
  try {
    const result = await new TraceService(new TraceRepository(db)).read(key);
    console.log(json ? JSON.stringify(result, null, 2) : formatTrace(result));
    return result.found ? 0 : 1;
  } finally {
    await db.destroy();
  }
}

async function backup(path: string, target: string): Promise<number> {
  const result = await backupDatabase(path, target);
  console.log(`backup written: ${result.target} (${result.leads} leads, ${result.bytes} bytes, integrity ok)`);
  return 0;
}

async function main(argv: string[]): Promise<number> {
  const [command, arg, ...rest] = argv;
  const path = process.env.DATABASE_PATH || './data/leads.sqlite';
  if (command === 'trace' && arg) return trace(path, arg, rest.includes('--json'));
  if (command === 'backup' && arg && rest.length === 0) return backup(path, arg);
  console.error(USAGE);
  return 2;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    console.error(err instanceof Error ? err.message : String(err));
    process.exit(2);
  },
);
