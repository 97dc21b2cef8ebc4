#!/usr/bin/env node
/**
 * Ops commands, run beside the server on the same SQLite file (DATABASE_PATH, default ./data/leads.sqlite):
 *   npm run leads -- trace <request_id | lead number> [--json]   the whole story of a request
 *   npm run leads -- backup <file>                               a consistent copy of the live database
 *   npm run leads -- forget --phone <+7…> | --telegram <@name>   erase every lead and repeat of a person (issue 14)
 */
import { existsSync } from 'node:fs';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { ContactEraser, parseContact } from './anonymisation/contact';
import { backupDatabase } from './database/backup';
import { checkpointTruncate, openDatabase } from './database/database';
import type { Database } from './database/schema';
import { LeadEventsRepository } from './repositories/lead-events.repository';
import { LeadsRepository } from './repositories/leads.repository';
import { TraceRepository } from './repositories/trace.repository';
import { Transactor } from './repositories/transactor';
import { formatTrace } from './trace/trace-format';
import { TraceService } from './trace/trace.service';

const USAGE = [
  'usage: npm run leads -- trace <request_id | lead number> [--json]',
  '       npm run leads -- backup <file>',
  '       npm run leads -- forget --phone <+7…> | --telegram <@name>',
].join('\n');

/**
 * Issue 14: erases every lead (and repeat) of a phone or a username in the database file, beside a running server:
 * the cards are marked for rewriting and the server's outbox rewrites them at its next pass; a truncating checkpoint
 * takes the values out of the WAL (tried again for a few seconds while a reader holds it off). Exit 0 when some were
 * erased, 1 when nobody was found.
 */
export async function forget(path: string, option: string, value: string, now = Date.now()): Promise<number> {
  const contact = parseContact(option === '--telegram' && !/^(@|https?:|t\.me|telegram\.me)/i.test(value) ? `@${value}` : value);
  if (!contact || (option === '--phone') !== (contact.kind === 'phone')) {
    console.error(option === '--phone' ? 'not a phone: + then 7–15 digits' : 'not a Telegram username: @name');
    return 2;
  }
  if (!existsSync(path)) {
    console.error(`no database at ${path} (set DATABASE_PATH)`);
    return 2;
  }
  const { db, sqlite } = openDatabase(path);
  try {
    const erased = await new ContactEraser(new LeadsRepository(db), new LeadEventsRepository(db), new Transactor(db)).erase(contact, now);
    for (let i = 0; erased.length > 0 && !checkpointTruncate(sqlite) && i < 50; i += 1) await new Promise((r) => setTimeout(r, 100));
    if (erased.length === 0) console.log('no leads of that contact: nobody erased');
    else
      console.log(`🗑 Обезличено заявок: ${erased.length} (${erased.map((id) => `#${id}`).join(', ')}); cards are rewritten by the server`);
    return erased.length > 0 ? 0 : 1;
  } finally {
    await db.destroy();
  }
}

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
  if (command === 'forget' && (arg === '--phone' || arg === '--telegram') && rest.length === 1) return forget(path, arg, rest[0]);
  console.error(USAGE);
  return 2;
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (err) => {
      console.error(err instanceof Error ? err.message : String(err));
      process.exit(2);
    },
  );
}
