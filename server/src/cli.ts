#!/usr/bin/env node
/**
 * `npm run leads -- <command>` (commander; `npm run leads -- --help`, and `--help` after any command). The ops
 * commands run beside the server on the same database: PostgreSQL when DATABASE_URL is set, else the SQLite file
 * (DATABASE_PATH, default ./data/leads.sqlite):
 *   setup                                            from TELEGRAM_BOT_TOKEN to the chat lines of .env (cli/setup.command.ts)
 *   doctor                                           checks a configured deployment, one line per check (cli/doctor.command.ts)
 *   trace <request_id | lead number> [--json]        the whole story of a request
 *   backup <file>                                    a consistent copy of the live database (SQLite)
 *   forget --phone <+7… | 8 9…> | --telegram <@name> erase every lead and repeat of a person
 *   migrate-to-postgres [postgres://…]               copy the SQLite file into an empty PostgreSQL
 *   webhooks replay <event id | lead number>         send webhook events again
 */
import { existsSync } from 'node:fs';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { parsePhoneRegion } from '@stickers/shared';
import { ContactEraser, parseContact, parsePhoneContact } from './anonymisation/contact';
import { ContactHasher } from './anonymisation/contact-hasher';
import { backupDatabase } from './database/backup';
import { checkpointTruncate, describeDatabaseUrl, openDatabase, openPostgres } from './database/database';
import { moveToPostgres } from './database/move-to-postgres';
import type { Database } from './database/schema';
import { ErasedContactsRepository } from './repositories/erased-contacts.repository';
import { LeadEventsRepository } from './repositories/lead-events.repository';
import { LeadErasureRepository } from './repositories/lead-erasure.repository';
import { TraceRepository } from './repositories/trace.repository';
import { Transactor } from './repositories/transactor';
import { terminalSafeJson } from './cli/terminal-text';
import { formatTrace } from './trace/trace-format';
import { TraceService } from './trace/trace.service';
import { WebhookEventsRepository } from './repositories/webhook-events.repository';
import { OutboxRepository } from './repositories/outbox.repository';
import { parseReplayKey, replayWebhooks } from './webhooks/webhook-replay';
import type { CliIo } from './cli/cli-io';
import { runCli } from './cli/program';

/** A PostgreSQL URL rather than a SQLite file path. */
function isPostgresUrl(location: string): boolean {
  return /^postgres(ql)?:\/\//i.test(location);
}

/** Opens the database at `location` (a SQLite path, or a PostgreSQL URL) for a command; null (said why) when absent. */
function openLocation(location: string): { db: Kysely<Database>; afterErase: () => boolean } | null {
  if (isPostgresUrl(location)) {
    const { db } = openPostgres(location, { max: 2 });
    return { db, afterErase: () => true };
  }
  if (!existsSync(location)) {
    console.error(`no database at ${location} (set DATABASE_PATH, or DATABASE_URL for PostgreSQL)`);
    return null;
  }
  const { db, sqlite } = openDatabase(location);
  return { db, afterErase: () => checkpointTruncate(sqlite) };
}

/**
 * Erases every lead (and repeat) of a phone or a username in the database file, beside a running server:
 * the cards are marked for rewriting and the server's outbox rewrites them at its next pass; a truncating checkpoint
 * takes the values out of the WAL (tried again for a few seconds while a reader holds it off). Exit 0 when some were
 * erased, 1 when nobody was found. The erasure is recorded as the server records it (keyed hashes of the contacts, so
 * that a late replay this person sent before is stored anonymised): it needs the server's LEADS_IP_SALT. The phone is
 * read as the form reads it, national spellings in the server's LEADS_PHONE_REGION (RU when unset).
 */
export async function forget(
  location: string,
  option: string,
  value: string,
  now = Date.now(),
  ipSalt?: string,
  phoneRegion?: string,
): Promise<number> {
  const region = parsePhoneRegion(phoneRegion);
  if (!region.ok) {
    console.error(region.error);
    return 2;
  }
  const contact =
    option === '--phone'
      ? parsePhoneContact(value, region.value)
      : parseContact(!/^(@|https?:|t\.me|telegram\.me)/i.test(value) ? `@${value}` : value);
  if (!contact || (option === '--phone') !== (contact.kind === 'phone')) {
    console.error(
      option === '--phone'
        ? `not a phone: a valid number with + or 00, or national in LEADS_PHONE_REGION (${region.value})`
        : 'not a Telegram username: @name',
    );
    return 2;
  }
  if (!ipSalt) {
    console.error("LEADS_IP_SALT must be set to the server's: the erasure is recorded as contact hashes keyed with it");
    return 2;
  }
  const opened = openLocation(location);
  if (!opened) return 2;
  const { db, afterErase } = opened;
  try {
    const eraser = new ContactEraser(
      new LeadErasureRepository(db),
      new LeadEventsRepository(db),
      new Transactor(db),
      new ErasedContactsRepository(db),
      ContactHasher.keyed(ipSalt),
    );
    const erased = await eraser.erase(contact, now);
    for (let i = 0; erased.length > 0 && !afterErase() && i < 50; i += 1) await new Promise((r) => setTimeout(r, 100));
    if (erased.length === 0) console.log('no leads of that contact: nobody erased');
    else
      console.log(`🗑 Обезличено заявок: ${erased.length} (${erased.map((id) => `#${id}`).join(', ')}); cards are rewritten by the server`);
    return erased.length > 0 ? 0 : 1;
  } finally {
    await db.destroy();
  }
}

/** The trace of a request or lead; `location` a SQLite path (opened read-only) or a PostgreSQL URL. */
export async function trace(location: string, key: string, json: boolean): Promise<number> {
  let db: Kysely<Database>;
  if (isPostgresUrl(location)) {
    db = openPostgres(location, { max: 1 }).db;
  } else {
    if (!existsSync(location)) {
      console.error(`no database at ${location} (set DATABASE_PATH, or DATABASE_URL for PostgreSQL)`);
      return 2;
    }
    const database = new BetterSqlite3(location, { readonly: true, fileMustExist: true });
    db = new Kysely<Database>({ dialect: new SqliteDialect({ database }) });
  }
  try {
    const result = await new TraceService(new TraceRepository(db)).read(key);
    console.log(json ? terminalSafeJson(result) : formatTrace(result));
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

/**
 * Copies the SQLite file into an empty PostgreSQL database (refuses one that holds any row), ids and all,
 * in one transaction; the lead numbering goes on where it stopped. Stop the server (or keep it from taking leads)
 * first: rows written after the copy's snapshot are not moved.
 */
export async function migrateToPostgres(path: string, url: string | undefined): Promise<number> {
  if (!url || !isPostgresUrl(url)) {
    console.error('migrate-to-postgres needs a PostgreSQL URL: npm run leads -- migrate-to-postgres postgres://… (or set DATABASE_URL)');
    return 2;
  }
  try {
    const report = await moveToPostgres(path, url, { log: (line) => console.log(line) });
    const leads = report.tables.find((t) => t.table === 'leads');
    console.log(
      `moved ${report.tables.reduce((n, t) => n + t.rows, 0)} rows in ${report.tables.length} tables to ${describeDatabaseUrl(url)}: ` +
        `${leads?.rows ?? 0} leads, the next lead is #${leads?.nextId ?? 1}. Set DATABASE_URL and start the server.`,
    );
    return 0;
  } catch (err) {
    console.error(`migrate-to-postgres: ${err instanceof Error ? err.message : String(err)}`);
    return 1;
  }
}

/**
 * Queues a webhook event (by its id) or every event of a lead (by its number) again, for the running
 * server's next pass to send. Exit 0 when something was queued, 1 when there was nothing to queue.
 */
export async function webhooksReplay(location: string, key: string, now = Date.now()): Promise<number> {
  const parsed = parseReplayKey(key);
  if (!parsed) {
    console.error('not an event id (evt_ and 32 hex digits) or a lead number');
    return 2;
  }
  const opened = openLocation(location);
  if (!opened) return 2;
  const { db } = opened;
  try {
    const { events, deliveries } = await replayWebhooks(
      new WebhookEventsRepository(db),
      new OutboxRepository(db),
      new LeadEventsRepository(db),
      new Transactor(db),
      parsed,
      now,
    );
    if (deliveries === 0) {
      console.log(
        'leadId' in parsed
          ? `no webhook events of lead #${parsed.leadId}: nothing queued`
          : `no webhook event ${parsed.publicId}: nothing queued`,
      );
      return 1;
    }
    console.log(
      `queued again: ${deliveries} deliveries of ${events.length} event(s) (${events.map((e) => `${e.type} ${e.public_id}`).join(', ')}); ` +
        'the server sends them at its next pass',
    );
    return 0;
  } finally {
    await db.destroy();
  }
}

/** The CLI with the process's streams, environment and Ctrl-C; resolves with the exit code (scripts/leads.mjs calls it). */
export function cli(argv: string[]): Promise<number> {
  const interrupted = new AbortController();
  // Setup waits for the operator: the first Ctrl-C makes it stop and hand polling back; a second one ends the process.
  if (argv[0] === 'setup') {
    process.once('SIGINT', () => {
      interrupted.abort();
      process.once('SIGINT', () => process.exit(130));
    });
  }
  const io: CliIo = {
    out: (line) => process.stdout.write(`${line}\n`),
    err: (line) => process.stderr.write(`${line}\n`),
    env: process.env,
    stdin: process.stdin,
    signal: interrupted.signal,
  };
  return runCli(argv, io, { trace, backup, forget, migrateToPostgres, webhooksReplay });
}

if (require.main === module) {
  cli(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (err) => {
      console.error(err instanceof Error ? err.message : String(err));
      process.exit(2);
    },
  );
}
