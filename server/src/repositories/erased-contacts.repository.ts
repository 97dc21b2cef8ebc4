import { Injectable } from '@nestjs/common';
import type BetterSqlite3 from 'better-sqlite3';
import { sql } from 'kysely';
import { InjectDb } from '../database/database.module';
import type { LeadsDb } from '../database/database';
import { dialectOf } from '../database/dialect-sql';
import { SUBMIT_LOCK_KEY } from './submit-runner';
import type { Tx } from './transactor';

/**
 * `erased_contacts`: the erasures `/stickers_forget` and `npm run leads -- forget` made, as keyed hashes of the
 * contacts (anonymisation/contact-hasher.ts) and each one's latest time. Without LEADS_IP_SALT a hash names nobody.
 */
@Injectable()
export class ErasedContactsRepository {
  private readonly postgres: boolean;

  constructor(@InjectDb() private readonly db: LeadsDb) {
    this.postgres = dialectOf(db) === 'postgres';
  }

  /**
   * The first statement of an erasing transaction: no submit decision runs beside it (SQLite's `BEGIN IMMEDIATE` does
   * that already; PostgreSQL takes the submit lock), so a decision's lead is either erased or finds the erasure.
   */
  async holdSubmits(trx: Tx): Promise<void> {
    if (this.postgres) await sql`select pg_advisory_xact_lock(${SUBMIT_LOCK_KEY})`.execute(trx);
  }

  /** These contacts were erased at `at`; a contact erased before keeps the later of the two times. */
  async record(hashes: readonly string[], at: number, trx: Tx): Promise<void> {
    for (const contact_hash of new Set(hashes)) {
      await trx
        .insertInto('erased_contacts')
        .values({ contact_hash, erased_at: at })
        .onConflict((oc) => oc.column('contact_hash').doUpdateSet({ erased_at: at }).where('erased_contacts.erased_at', '<', at))
        .execute();
    }
  }

  /**
   * Whether any of a submission's contact hashes was erased at or after `submittedAt`: then the submission (a late
   * replay sent before the erasure) is stored anonymised (docs/decisions.md, "Erasure that erases…").
   */
  async erasedSince(hashes: readonly string[], submittedAt: number, trx?: Tx): Promise<boolean> {
    if (hashes.length === 0) return false;
    const row = await (trx ?? this.db)
      .selectFrom('erased_contacts')
      .select('erased_at')
      .where('contact_hash', 'in', [...hashes])
      .where('erased_at', '>=', submittedAt)
      .limit(1)
      .executeTakeFirst();
    return row !== undefined;
  }

  /** `erasedSince` as a prepared statement of the SQLite decision runner (synchronous): prepare once, call per decision. */
  static sqliteErasedSince(sqlite: BetterSqlite3.Database): (hashes: readonly string[], submittedAt: number) => boolean {
    const statement = sqlite.prepare(
      'select 1 from erased_contacts where erased_at >= ? and contact_hash in (select value from json_each(?)) limit 1',
    );
    return (hashes, submittedAt) => hashes.length > 0 && statement.get(submittedAt, JSON.stringify(hashes)) !== undefined;
  }

  /** Housekeeping: drops the erasures no late replay can precede any more (older than `cutoff`); how many. */
  async pruneBefore(cutoff: number): Promise<number> {
    const result = await this.db.deleteFrom('erased_contacts').where('erased_at', '<', cutoff).executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
