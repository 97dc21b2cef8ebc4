/** The ops commands of `npm run leads`, on the server's database: PostgreSQL at DATABASE_URL, else the SQLite file at DATABASE_PATH. */
import { existsSync } from 'node:fs';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { parsePhoneRegion, errorText } from '@stickers/shared';
import { ContactEraser, parseContact, parsePhoneContact } from '../anonymisation/contact';
import { ContactHasher } from '../anonymisation/contact-hasher';
import { BackupRefused, backupDatabase } from '../database/backup';
import { checkpointTruncate, describeDatabaseUrl, openDatabase, openPostgres } from '../database/database';
import { moveToPostgres } from '../database/move-to-postgres';
import type { Database } from '../database/schema';
import { Clock } from '../clock/clock';
import type { ServerConfig } from '../config/config';
import { LeadsRepository } from '../repositories/leads.repository';
import { LeadErasureRepository } from '../repositories/lead-erasure.repository';
import { LeadPagesRepository } from '../repositories/lead-pages.repository';
import { Transactor } from '../repositories/transactor';
import { terminalSafeJson } from './terminal-text';
import { formatTrace } from '../trace/trace-format';
import { TraceService } from '../trace/trace.service';
import { WebhookEventsRepository } from '../repositories/webhook-events.repository';
import { OutboxRepository } from '../repositories/outbox.repository';
import { parseReplayKey, WebhookEventsService } from '../webhooks/webhook-events.service';

function isPostgresUrl(location: string): boolean {
  return /^postgres(ql)?:\/\//i.test(location);
}

/** Runs `work` on the database at `location`, then closes it; 2 when there is no SQLite file. `afterErase` empties SQLite's WAL. */
async function withDatabase(
  location: string,
  work: (db: Kysely<Database>, afterErase: () => boolean) => Promise<number>,
  readonly = false,
): Promise<number> {
  let opened: { db: Kysely<Database>; afterErase: () => boolean };
  if (isPostgresUrl(location)) opened = { db: openPostgres(location, { max: 2 }).db, afterErase: () => true };
  else if (!existsSync(location)) {
    console.error(`no database at ${location} (set DATABASE_PATH, or DATABASE_URL for PostgreSQL)`);
    return 2;
  } else if (readonly) {
    const database = new BetterSqlite3(location, { readonly: true, fileMustExist: true });
    opened = { db: new Kysely<Database>({ dialect: new SqliteDialect({ database }) }), afterErase: () => true };
  } else {
    const { db, sqlite } = openDatabase(location);
    opened = { db, afterErase: () => checkpointTruncate(sqlite) };
  }
  try {
    return await work(opened.db, opened.afterErase);
  } finally {
    await opened.db.destroy();
  }
}

/** Erases every lead and repeat of a contact, recorded as hashes keyed with LEADS_IP_SALT; the server's outbox rewrites the cards. */
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
  return withDatabase(location, async (db, afterErase) => {
    const eraser = new ContactEraser(
      new LeadErasureRepository(db),
      new LeadsRepository(db),
      new Transactor(db),
      ContactHasher.keyed(ipSalt),
    );
    const erased = await eraser.erase(contact, now);
    // A truncating checkpoint takes the values out of the WAL, tried for a few seconds while a reader holds it off.
    for (let i = 0; erased.length > 0 && !afterErase() && i < 50; i += 1) await new Promise((r) => setTimeout(r, 100));
    if (erased.length === 0) console.log('no leads of that contact: nobody erased');
    else
      console.log(
        `🗑 erased ${erased.length} lead${erased.length > 1 ? 's' : ''} (${erased.map((id) => `#${id}`).join(', ')}); ` +
          'cards are rewritten by the server',
      );
    return erased.length > 0 ? 0 : 1;
  });
}

export function trace(location: string, key: string, json: boolean): Promise<number> {
  return withDatabase(
    location,
    async (db) => {
      const result = await new TraceService(new LeadPagesRepository(db)).read(key);
      console.log(json ? terminalSafeJson(result) : formatTrace(result));
      return result.found ? 0 : 1;
    },
    true,
  );
}

/** `retry`: what waits after a failure goes at the running server's next pass, not at its next time. */
export function retry(location: string, now = Date.now()): Promise<number> {
  return withDatabase(location, async (db) => {
    const due = await new OutboxRepository(db).failedDueNow(now);
    console.log(
      `${due} waiting after a failure (cards, pings, answers, webhook deliveries): due now; the running server sends them at its next pass`,
    );
    return 0;
  });
}

export async function backup(path: string, target: string): Promise<number> {
  const result = await backupDatabase(path, target).catch((err: unknown) => {
    if (err instanceof BackupRefused) return err.message;
    throw err;
  });
  if (typeof result === 'string') {
    console.error(result);
    return 2;
  }
  console.log(`backup written: ${result.target} (${result.leads} leads, ${result.bytes} bytes, integrity ok)`);
  return 0;
}

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
    console.error(`migrate-to-postgres: ${errorText(err)}`);
    return 1;
  }
}

/** `webhooks replay`: `webhooks` are the server's LEADS_WEBHOOK_URL, read as the server reads it (a delivery goes only to those). */
export async function webhooksReplay(
  location: string,
  key: string,
  webhooks: ServerConfig['webhooks'],
  clock = new Clock(),
): Promise<number> {
  const parsed = parseReplayKey(key);
  if (!parsed) {
    console.error('not an event id (evt_ and 32 hex digits) or a lead number');
    return 2;
  }
  if (webhooks.length === 0) {
    console.error(
      "LEADS_WEBHOOK_URL is not set: webhooks replay sends to its URLs, as the server does (run it with the server's variables)",
    );
    return 2;
  }
  return withDatabase(location, async (db) => {
    const service = new WebhookEventsService(
      { webhooks },
      new WebhookEventsRepository(db),
      new OutboxRepository(db),
      new LeadsRepository(db),
      new Transactor(db),
      clock,
    );
    const { events, deliveries, notConfigured } = await service.replay(parsed);
    const removed = notConfigured > 0 ? `${notConfigured} to URLs no longer in LEADS_WEBHOOK_URL not queued` : '';
    if (deliveries === 0) {
      const what = 'leadId' in parsed ? `webhook events of lead #${parsed.leadId}` : `webhook event ${parsed.publicId}`;
      console.log(events.length === 0 ? `no ${what}: nothing queued` : `${what}: ${removed}; nothing queued`);
      return 1;
    }
    console.log(
      `queued again: ${deliveries} deliveries of ${events.length} event(s) (${events.map((e) => `${e.type} ${e.public_id}`).join(', ')}); ` +
        `${removed ? `${removed}; ` : ''}the server sends them at its next pass`,
    );
    return 0;
  });
}
