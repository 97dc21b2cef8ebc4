import { Injectable } from '@nestjs/common';
import type { Transaction } from 'kysely';
import { InjectDb } from '../database/database.module';
import type { LeadsDb } from '../database/database';
import type { Database } from '../database/schema';

/** An open transaction, handed by a service from the Transactor to the repository methods that take one. */
export type Tx = Transaction<Database>;

/**
 * Lets a service make the writes of two repositories one commit without touching Kysely itself. Repository methods
 * that may be part of such a commit take an optional `trx`; without one they run on their own.
 */
@Injectable()
export class Transactor {
  constructor(@InjectDb() private readonly db: LeadsDb) {}

  run<T>(work: (trx: Tx) => Promise<T>): Promise<T> {
    return this.db.transaction().execute(work);
  }
}
